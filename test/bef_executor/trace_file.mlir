// --trace_file writes a Chrome trace event file: a complete event per
// kernel (name, source location, thread) and per eager op, and an async
// span per function call; valid JSON that Perfetto opens.
// RUN: bef_executor --trace_file=%t.json %s | FileCheck %s --check-prefix=OUT
// RUN: python3 -c "import json, sys; json.load(open(sys.argv[1]))" %t.json
// RUN: FileCheck %s --input-file=%t.json
// RUN: bef_executor --work_queue_type=mstd:2 --trace_file=%t2.json %s
// RUN: python3 -c "import json, sys; json.load(open(sys.argv[1]))" %t2.json
// RUN: not bef_executor --trace_file=/nonexistent-dir/t.json %s 2>&1 | FileCheck %s --check-prefix=BAD

// Tracing to a file prints nothing more.
// OUT: --- Running 'traced'
// OUT-NEXT: 'traced' returned 3
// OUT-NOT: Scope

// BAD: error: cannot write the trace file '/nonexistent-dir/t.json'

// CHECK: "displayTimeUnit":"ns","traceEvents":[
// CHECK-DAG: "name":"traced","ph":"b"{{.*}}"cat":"function"
// CHECK-DAG: "name":"traced","ph":"e"{{.*}}"cat":"function"
// CHECK-DAG: "name":"tfrt.add.i32","ph":"X"{{.*}}"dur":{{.*}}"args":{"location":"{{.*}}trace_file.mlir:[[@LINE+6]]:{{[0-9]+}}"}
// CHECK-DAG: "name":"tfrt.constant.i32","ph":"X"
// CHECK-DAG: "name":"thread_name","ph":"M"
func.func @traced() -> i32 {
  %one = tfrt.constant.i32 1
  %two = tfrt.constant.i32 2
  %three = tfrt.add.i32 %one, %two
  tfrt.return %three : i32
}
