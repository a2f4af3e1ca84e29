#!/usr/bin/env bash
# asyncrt_model_server end to end, with curl on loopback: TF Serving's and
# KServe v2's REST APIs on a tiny model, errors, a new version loaded while
# a client loop runs (no request fails, the version switches), and SIGTERM
# while a client loop runs (exit 0, every request that got an answer
# succeeded); config files, re-read while running; batching.
#   model_server_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill -9 "$server_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- server log" >&2
  cat "$work/server.log" >&2 || true
  exit 1
}

# A model that multiplies its input by FACTOR, as version VERSION.
make_version() {
  local version=$1 factor=$2
  local dir="$work/models/tiny/$version"
  mkdir -p "$work/staging/$version"
  cat > "$work/staging/$version/model.mlir" << MLIR
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %k = nn.constant dense<$factor.0> : tensor<f32> : tensor<f32>
  %y = nn.mul %x, %k : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
MLIR
  "$build/bin/asyncrt-compile" "$work/staging/$version/model.mlir" \
    -o "$work/staging/$version/model.bef"
  rm "$work/staging/$version/model.mlir"
  cat > "$work/staging/$version/signature.json" << JSON
{"inputs": [{"name": "x", "dtype": "float32", "shape": [1, 4]}],
 "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 4]}]}
JSON
  # Appears at once, complete: what a deployment's rename does.
  mv "$work/staging/$version" "$dir"
}

mkdir -p "$work/models/tiny"
make_version 1 2

# Starts the server on free loopback ports with the given flags; sets
# server_pid and url.
start_server() {
  "$build/bin/asyncrt_model_server" --rest_api_port=0 --port=0 \
    --rest_api_address=127.0.0.1 --grpc_address=127.0.0.1 "$@" \
    > "$work/server.log" 2>&1 &
  server_pid=$!
  local port=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's/^Exporting HTTP\/REST API at:127.0.0.1:\([0-9]*\)$/\1/p' \
      "$work/server.log")
    [[ -n "$port" ]] && break
    kill -0 "$server_pid" 2> /dev/null || fail "the server exited at start"
    sleep 0.1
  done
  [[ -n "$port" ]] || fail "the server did not start"
  url="http://127.0.0.1:$port"
}

start_server --model_name=tiny --model_base_path="$work/models/tiny" \
  --file_system_poll_wait_seconds=1 --rest_api_max_body_bytes=65536

# expect METHOD PATH BODY STATUS SUBSTRING
expect() {
  local method=$1 path=$2 body=$3 status=$4 want=$5
  local got code
  if [[ "$method" == GET ]]; then
    got=$(curl -s -w '\n%{http_code}' "$url$path")
  else
    got=$(curl -s -w '\n%{http_code}' -X "$method" -d "$body" "$url$path")
  fi
  code=${got##*$'\n'}
  got=${got%$'\n'*}
  [[ "$code" == "$status" ]] || fail "$method $path: HTTP $code, not $status: $got"
  [[ "$got" == *"$want"* ]] || fail "$method $path: '$got' lacks '$want'"
}

# TF Serving REST.
expect GET /v1/models/tiny "" 200 '"version":"1","state":"AVAILABLE"'
expect GET /v1/models/tiny/versions/1 "" 200 '"error_code":"OK"'
expect GET /v1/models/tiny/metadata "" 200 '"x":{"dtype":"DT_FLOAT"'
expect POST /v1/models/tiny:predict '{"instances": [[1, 2, 3, 4]]}' 200 \
  '{"predictions":[[2,4,6,8]]}'
expect POST /v1/models/tiny/versions/1:predict '{"inputs": {"x": [[1, -1, 0.5, NaN]]}}' \
  200 '{"outputs":[[2,-2,1,NaN]]}'
# Errors, with TF Serving's codes.
expect POST /v1/models/tiny:predict '{"instances": [[1, 2' 400 '"error":"malformed JSON'
expect POST /v1/models/tiny:predict '{"instances": [[1, 2]]}' 400 \
  'has shape [1, 2]; the model takes [1, 4]'
expect POST /v1/models/nope:predict '{"instances": [[1]]}' 404 \
  'Servable not found for request: Latest(nope)'
expect POST /v1/models/tiny/versions/7:predict '{"instances": [[1]]}' 404 \
  'Specific(tiny, 7)'
expect POST /v1/models/tiny:classify '{"examples": []}' 400 \
  'Expected classify signature method_name'
expect GET /v1/nothing "" 404 'Malformed request: GET /v1/nothing'
big=$(head -c 70000 /dev/zero | tr '\0' '1')
expect POST /v1/models/tiny:predict "$big" 413 'too large'

# KServe v2 REST.
expect GET /v2/health/live "" 200 '{"live":true}'
expect GET /v2/health/ready "" 200 '{"ready":true}'
expect GET /v2/models/tiny "" 200 '"inputs":[{"name":"x","datatype":"FP32","shape":[1,4]}]'
expect GET /v2/models/tiny/ready "" 200 '"ready":true'
expect POST /v2/models/tiny/infer \
  '{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}' \
  200 '"model_version":"1","outputs":[{"name":"y","shape":[1,4],"datatype":"FP32","data":[2,4,6,8]}]'
expect POST /v2/models/tiny/infer '{"inputs": []}' 400 "input 'x' is missing"
# The binary-data extension: the input's bytes after the JSON, the output's
# after the reply's JSON (1, 2, 3, 4 doubled).
json='{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "parameters": {"binary_data_size": 16}}], "parameters": {"binary_data_output": true}}'
{ printf '%s' "$json"
  printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
} > "$work/binary_request"
curl -s -D "$work/binary_headers" -o "$work/binary_reply" \
  -H "Inference-Header-Content-Length: ${#json}" \
  --data-binary @"$work/binary_request" "$url/v2/models/tiny/infer"
reply_json_length=$(tr -d '\r' < "$work/binary_headers" |
  sed -n 's/^[Ii]nference-[Hh]eader-[Cc]ontent-[Ll]ength: //p')
[[ -n "$reply_json_length" ]] || fail "no Inference-Header-Content-Length: $(cat "$work/binary_headers")"
head -c "$reply_json_length" "$work/binary_reply" | grep -q '"binary_data_size":16' ||
  fail "binary reply JSON: $(head -c "$reply_json_length" "$work/binary_reply")"
[[ "$(tail -c 16 "$work/binary_reply" | od -An -tf4 | tr -s ' ')" == " 2 4 6 8" ]] ||
  fail "binary reply data: $(tail -c 16 "$work/binary_reply" | od -An -tf4)"

# Metrics, in Prometheus' text format.
expect GET /monitoring/prometheus/metrics "" 200 \
  'asyncrt_serving_requests_total{model="tiny",version="1",api="predict",code="200"} 2'
expect GET /monitoring/prometheus/metrics "" 200 \
  'asyncrt_serving_requests_total{model="tiny",version="1",api="predict",code="400"}'
expect GET /monitoring/prometheus/metrics "" 200 \
  'asyncrt_serving_request_latency_seconds_count{model="tiny",version="1",api="infer"} 3'
expect GET /monitoring/prometheus/metrics "" 200 \
  'asyncrt_serving_model_version_available{model="tiny",version="1"} 1'

# A client loop; prints the number of requests that failed.
client_loop() {
  local stop_file=$1 failures=0 code
  while [[ ! -e "$stop_file" ]]; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -d '{"instances": [[1, 1, 1, 1]]}' \
      "$url/v1/models/tiny:predict" || true)
    # 000: no connection (the server no longer accepts): never accepted.
    if [[ "$code" != 200 && "$code" != 000 ]]; then
      failures=$((failures + 1))
    fi
  done
  echo "$failures"
}

# Reload under load: version 2 appears, requests keep succeeding, and the
# answers switch to it.
client_loop "$work/stop_reload" > "$work/reload_failures" &
loop_pid=$!
sleep 0.5
make_version 2 3
switched=""
for _ in $(seq 1 100); do
  if curl -s -d '{"instances": [[1, 1, 1, 1]]}' "$url/v1/models/tiny:predict" |
      grep -q '\[\[3,3,3,3\]\]'; then
    switched=yes
    break
  fi
  sleep 0.1
done
touch "$work/stop_reload"
wait "$loop_pid"
[[ "$switched" == yes ]] || fail "version 2 was not served"
[[ "$(cat "$work/reload_failures")" == 0 ]] ||
  fail "$(cat "$work/reload_failures") requests failed during the reload"
expect GET /v1/models/tiny "" 200 '"version":"2","state":"AVAILABLE"'
expect GET /v1/models/tiny "" 200 '"version":"1","state":"END"'

# A version whose warm-up request fails is never served: it ends with the
# reason, and version 2 keeps serving.
mkdir -p "$work/staging/3"
cp "$work/models/tiny/2/model.bef" "$work/models/tiny/2/signature.json" "$work/staging/3/"
echo '[{"instances": [[1, 2, 3, 4]]}, {"instances": [[1, 2]]}]' > "$work/staging/3/warmup.json"
mv "$work/staging/3" "$work/models/tiny/3"
for _ in $(seq 1 50); do
  curl -s "$url/v1/models/tiny" | grep -q '"version":"3","state":"END"' && break
  sleep 0.1
done
expect GET /v1/models/tiny/versions/3 "" 200 'warm-up request 2 failed: input'
expect POST /v1/models/tiny:predict '{"instances": [[1, 1, 1, 1]]}' 200 '[[3,3,3,3]]'
rm -rf "$work/models/tiny/3"

# SIGTERM under load: exit 0, and no answered request failed.
client_loop "$work/stop_term" > "$work/term_failures" &
loop_pid=$!
sleep 0.5
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
touch "$work/stop_term"
wait "$loop_pid"
[[ "$status" == 0 ]] || fail "the server exited with $status after SIGTERM"
[[ "$(cat "$work/term_failures")" == 0 ]] ||
  fail "$(cat "$work/term_failures") requests failed around SIGTERM"
grep -q "draining" "$work/server.log" || fail "no drain on SIGTERM"

# A model of strings: it returns its input (a BEF program of one return).
mkdir -p "$work/models/echo/1"
cat > "$work/echo.mlir" << MLIR
func.func @main(%x: !corert.tensorhandle) -> !corert.tensorhandle {
  tfrt.return %x : !corert.tensorhandle
}
MLIR
"$build/bin/asyncrt-translate" -mlir-to-bef "$work/echo.mlir" \
  -o "$work/models/echo/1/model.bef"
cat > "$work/models/echo/1/signature.json" << JSON
{"inputs": [{"name": "x", "dtype": "string", "shape": [-1]}],
 "outputs": [{"name": "y_bytes", "dtype": "string", "shape": [-1]}]}
JSON

# A model config file (TF Serving's text format): two versions served at
# once, a label, and metrics where the monitoring config says.
cat > "$work/models.config" << CONFIG
model_config_list {
  config {
    name: "tiny"
    base_path: "$work/models/tiny"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 1 versions: 2 } }
    version_labels { key: "stable" value: 1 }
  }
  config { name: "echo" base_path: "$work/models/echo" }
}
CONFIG
echo 'prometheus_config { enable: true, path: "/metrics" }' > "$work/monitoring.config"
start_server --model_config_file="$work/models.config" \
  --monitoring_config_file="$work/monitoring.config"
expect POST /v1/models/tiny/labels/stable:predict '{"instances": [[1, 1, 1, 1]]}' 200 \
  '{"predictions":[[2,2,2,2]]}'
expect POST /v1/models/tiny/versions/2:predict '{"instances": [[1, 1, 1, 1]]}' 200 \
  '{"predictions":[[3,3,3,3]]}'
expect POST /v1/models/tiny/labels/nope:predict '{"instances": [[1, 1, 1, 1]]}' 404 \
  'Unrecognized servable version label: nope'
expect GET /metrics "" 200 'asyncrt_serving_model_version_available{model="tiny",version="2"} 1'
# Strings: {"b64": ...} and text in, base64 out (an output named *_bytes);
# KServe's BYTES as JSON strings.
expect POST /v1/models/echo:predict '{"instances": [{"b64": "AP8="}, "hi"]}' 200 \
  '{"predictions":[{"b64":"AP8="},{"b64":"aGk="}]}'
expect POST /v1/models/echo:predict '{"instances": [{"b64": "%%"}]}' 400 \
  'is not valid base64'
expect POST /v2/models/echo/infer \
  '{"inputs": [{"name": "x", "shape": [2], "datatype": "BYTES", "data": ["a", "b"]}]}' \
  200 '"outputs":[{"name":"y_bytes","shape":[2],"datatype":"BYTES","data":["a","b"]}]'
kill -TERM "$server_pid"
wait "$server_pid" || fail "the second server did not exit cleanly"
server_pid=""
# Re-reading the model config file: a model added to it is loaded and
# served, a model taken out of it stops being served, and a file that no
# longer parses leaves the models as they are.
mkdir -p "$work/models/other"
cp -r "$work/models/tiny/2" "$work/models/other/1"
echo "model_config_list { config { name: \"tiny\" base_path: \"$work/models/tiny\" } }" \
  > "$work/live.config"
start_server --model_config_file="$work/live.config" \
  --model_config_file_poll_wait_seconds=1 --file_system_poll_wait_seconds=60
expect GET /v1/models/other "" 404 'other'
# wait_for PATH STATUS: up to 10 s for GET PATH to answer STATUS.
wait_for() {
  for _ in $(seq 1 100); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url$1")" == "$2" ]] && return 0
    sleep 0.1
  done
  fail "GET $1 did not turn $2 after the config changed"
}
cat > "$work/live.config.new" << CONFIG
model_config_list {
  config { name: "tiny" base_path: "$work/models/tiny" }
  config { name: "other" base_path: "$work/models/other" }
}
CONFIG
mv "$work/live.config.new" "$work/live.config"
wait_for /v1/models/other 200
expect POST /v1/models/other:predict '{"instances": [[1, 1, 1, 1]]}' 200 \
  '{"predictions":[[3,3,3,3]]}'
echo "model_config_list { config { name: \"other\" base_path: \"$work/models/other\" } }" \
  > "$work/live.config.new"
mv "$work/live.config.new" "$work/live.config"
wait_for /v1/models/tiny 404
echo 'model_config_list { config {' > "$work/live.config"
sleep 2.5
expect POST /v1/models/other:predict '{"instances": [[1, 1, 1, 1]]}' 200 \
  '{"predictions":[[3,3,3,3]]}'
grep -q "live.config" "$work/server.log" || fail "the bad config went unreported"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the reconfigured server did not exit cleanly"
server_pid=""

# Batching: concurrent requests run in shared batches (the metrics show
# fewer batches than requests) and get the answers they get alone.
cat > "$work/batching.config" << CONFIG
max_batch_size { value: 8 }
batch_timeout_micros { value: 200000 }
num_batch_threads { value: 2 }
CONFIG
start_server --model_name=tiny --model_base_path="$work/models/tiny" \
  --enable_batching --batching_parameters_file="$work/batching.config"
for i in 1 2 3 4 5 6 7 8; do
  curl -s -d "{\"instances\": [[$i, 0, 0, 0]]}" "$url/v1/models/tiny:predict" \
    > "$work/batched_$i" &
done
wait $(jobs -p | grep -v "^$server_pid\$") 2> /dev/null || true
for i in 1 2 3 4 5 6 7 8; do
  grep -q "{\"predictions\":\[\[$((3 * i)),0,0,0\]\]}" "$work/batched_$i" ||
    fail "batched request $i got $(cat "$work/batched_$i")"
done
metrics=$(curl -s "$url/monitoring/prometheus/metrics")
batches=$(sed -n 's/^asyncrt_serving_batch_size_count{model="tiny",version="2"} //p' <<< "$metrics")
rows=$(sed -n 's/^asyncrt_serving_batch_size_sum{model="tiny",version="2"} //p' <<< "$metrics")
[[ "$rows" == 8 ]] || fail "the batches held $rows rows, not 8: $metrics"
(( batches < 8 )) || fail "8 concurrent requests ran in $batches batches"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the batching server did not exit cleanly"
server_pid=""

# A model compiled for a plug-in's device (the example accelerator), with
# a memory limit: the first call runs plainly, the second records its
# device graph, the rest replay it, all with the right answers; the
# device's gauges are in the metrics. A limit naming no device stops the
# server at start.
mkdir -p "$work/models/on_sim/1"
cat > "$work/on_sim.mlir" << MLIR
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %k = nn.constant dense<3.0> : tensor<f32> : tensor<f32>
  %y = nn.add %x, %k : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %z = nn.relu %y : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %z : tensor<1x4xf32>
}
MLIR
"$build/bin/asyncrt-compile" "$work/on_sim.mlir" --device=SIM:0 \
  -o "$work/models/on_sim/1/model.bef"
cat > "$work/models/on_sim/1/signature.json" << JSON
{"inputs": [{"name": "x", "dtype": "float32", "shape": [1, 4]}],
 "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 4]}]}
JSON
start_server --model_name=on_sim --model_base_path="$work/models/on_sim" \
  --plugins="$build/lib/libasyncrt_sim_accelerator.so" \
  --device_memory_limit=sim=2MiB
for i in 1 2 3 4; do
  expect POST /v1/models/on_sim:predict "{\"instances\": [[$i, -2, -5, -4]]}" \
    200 "{\"predictions\":[[$((i + 3)),1,0,0]]}"
done
metrics=$(curl -s "$url/monitoring/prometheus/metrics")
grep -q '^asyncrt_device_memory_limit_bytes{device="SIM:0"} 2097152$' <<< "$metrics" ||
  fail "no SIM:0 memory limit of 2 MiB in the metrics: $metrics"
grep -q '^asyncrt_device_memory_in_use_bytes{device="SIM:0"} [0-9]' <<< "$metrics" ||
  fail "no SIM:0 memory in use in the metrics: $metrics"
kill -TERM "$server_pid"
wait "$server_pid" || fail "the server with a plug-in did not exit cleanly"
server_pid=""
if "$build/bin/asyncrt_model_server" --model_name=tiny \
    --model_base_path="$work/models/tiny" --device_memory_limit=gpu=1GiB \
    2> "$work/bad_limit.log"; then
  fail "a memory limit naming no device was accepted"
fi
grep -q "device memory limit 'gpu' names no device" "$work/bad_limit.log" ||
  fail "$(cat "$work/bad_limit.log")"

echo 'model_config_list { config { name: "x" } }' > "$work/bad.config"
if "$build/bin/asyncrt_model_server" --model_config_file="$work/bad.config" \
    2> "$work/bad.log"; then
  fail "a bad model config was accepted"
fi
grep -q "needs a name and a base_path" "$work/bad.log" || fail "$(cat "$work/bad.log")"
echo "PASS: model server REST APIs, reload and drain"
