// An asynchronous HTTP/1.1 server (Boost.Beast on Asio: Debian's, header
// only): a pool of I/O threads, keep-alive connections, request bodies up
// to a limit (413 past it), and a clean drain. Requests go to one handler,
// which answers once, from any thread, whenever it is done: a model's
// request never holds an I/O thread while it runs. While a request waits
// for its answer, the server watches its connection and tells the handler
// (ClientGone) when the client closes or resets it, so that work nobody
// will read can stop.
//
// Ownership: the server owns its threads and connections. Thread-safety:
// all members are thread-safe. Blocking: Start binds and returns;
// Shutdown and the destructor block until the server is drained.
#ifndef ASYNCRT_SERVING_HTTP_SERVER_H_
#define ASYNCRT_SERVING_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <utility>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace asyncrt::serving {

// Tells a handler that the client of its request went away (closed or
// reset the connection) before the answer. A client that half-closes its
// side after sending a request counts as gone, as in nginx. Thread-safe.
class ClientGone {
 public:
  // Runs `callback` once when the client goes: at once, on this thread, if
  // it has gone already. Replaces an earlier callback.
  void OnGone(absl::AnyInvocable<void() &&> callback);
  // The server's side: the client went. Runs the callback (on this
  // thread), at most once.
  void Notify();
  // Drops the callback unrun: the request was answered.
  void Reset();
  bool gone() const;

 private:
  // std::mutex, not absl::Mutex: ThreadSanitizer sees pthreads (Debian's
  // Abseil is not built with it).
  mutable std::mutex mutex_;
  bool gone_ = false;                       // Guarded by mutex_.
  absl::AnyInvocable<void() &&> callback_;  // Guarded by mutex_.
};

namespace internal {

// What a connection that turned readable while its request runs holds.
enum class PeerActivity {
  kSentMore,  // Bytes wait: the client's next (pipelined) request.
  kHungUp,    // The client closed (or half-closed) or reset it.
  kNothing,   // Neither: a stale readiness. Edge-triggered epoll can report
              // a socket readable after the bytes that made it so were read.
};
// Looks at connected socket `fd` without taking bytes or blocking.
PeerActivity PeekPeer(int fd);

}  // namespace internal

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/v1/models/m:predict", the query included.
  std::string body;
  // Header fields (name, value) as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  // The value of header `name` (any case), if there is one.
  std::optional<absl::string_view> Header(absl::string_view name) const;
  // Set by the server for every request; may be null elsewhere (tests).
  std::shared_ptr<ClientGone> client_gone;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // More header fields (name, value).
  std::vector<std::pair<std::string, std::string>> headers;
};

// Answers a request: call exactly once, from any thread.
using HttpResponder = absl::AnyInvocable<void(HttpResponse response) &&>;
using HttpHandler = std::function<void(HttpRequest request,
                                       HttpResponder respond)>;

class HttpServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    int port = 8501;  // 0: any free port (see port()).
    int num_threads = 0;  // 0: one per hardware thread.
    size_t max_body_bytes = size_t{64} << 20;
  };

  // Binds and starts serving. An error (the port in use, ...) names the
  // address and port.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const Options& options, HttpHandler handler);
  // Shutdown(absl::Seconds(30)) if not done.
  ~HttpServer();

  // The bound port.
  int port() const;
  // Requests being handled now.
  int64_t in_flight() const;

  // Stops accepting connections and requests, lets the requests in flight
  // finish (their replies close their connections), waits for them up to
  // `timeout`, then stops; also waits (within the same `timeout`) for the
  // responders handed out to be destroyed, since each holds its
  // connection. A handler must not keep a responder past that. Idempotent.
  void Shutdown(absl::Duration timeout);

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_HTTP_SERVER_H_
