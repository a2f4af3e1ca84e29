// The only file that sees Boost: Beast's compile time stays here.
#include "asyncrt/serving/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/strand.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace asyncrt::serving {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

std::optional<absl::string_view> HttpRequest::Header(
    absl::string_view name) const {
  for (const auto& [field, value] : headers) {
    if (absl::EqualsIgnoreCase(field, name)) return value;
  }
  return std::nullopt;
}

void ClientGone::OnGone(absl::AnyInvocable<void() &&> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!gone_) {
      callback_ = std::move(callback);
      return;
    }
  }
  std::move(callback)();
}

void ClientGone::Notify() {
  absl::AnyInvocable<void() &&> callback;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (gone_) return;
    gone_ = true;
    callback = std::move(callback_);
    callback_ = nullptr;
  }
  if (callback) std::move(callback)();
}

void ClientGone::Reset() {
  absl::AnyInvocable<void() &&> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  dropped = std::move(callback_);  // Destroyed after the lock is released.
  callback_ = nullptr;
}

bool ClientGone::gone() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gone_;
}

namespace internal {

PeerActivity PeekPeer(int fd) {
  char byte;
  const ssize_t peeked = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked > 0) return PeerActivity::kSentMore;
  if (peeked < 0 &&
      (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    return PeerActivity::kNothing;
  }
  return PeerActivity::kHungUp;  // 0: end of stream; else reset or error.
}

}  // namespace internal

class HttpServer::Impl {
 public:
  Impl(const Options& options, HttpHandler handler)
      : options_(options),
        handler_(std::move(handler)),
        io_(std::max(1, options.num_threads)),
        acceptor_(net::make_strand(io_)) {}

  absl::Status Listen() {
    beast::error_code error;
    const net::ip::address address =
        net::ip::make_address(options_.address, error);
    if (error) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad address '", options_.address, "'"));
    }
    const tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.set_option(net::socket_base::reuse_address(true), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(net::socket_base::max_listen_connections, error);
    if (error) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on ", options_.address, ":", options_.port, ": ",
          error.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    return absl::OkStatus();
  }

  void Run(int threads) {
    Accept();
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void Shutdown(absl::Duration timeout) {
    {
      std::lock_guard<std::mutex> lock(shutdown_mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    draining_.store(true);
    net::dispatch(acceptor_.get_executor(), [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
    });
    const auto deadline = std::chrono::steady_clock::now() +
                          absl::ToChronoNanoseconds(timeout);
    while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    io_.stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    // A responder called on another thread may still be returning (its
    // reply posted, written and read already) and hold its connection,
    // which must go before the io_context does.
    while (responders_.load(std::memory_order_acquire) > 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  int port() const { return port_; }
  int64_t in_flight() const { return in_flight_.load(); }
  bool draining() const { return draining_.load(); }
  const Options& options() const { return options_; }
  const HttpHandler& handler() const { return handler_; }
  std::atomic<int64_t>& in_flight_counter() { return in_flight_; }
  std::atomic<int64_t>& responders() { return responders_; }

 private:
  class Session;

  void Accept();

  Options options_;
  HttpHandler handler_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  std::atomic<int64_t> in_flight_{0};
  // Responders handed out and not yet destroyed.
  std::atomic<int64_t> responders_{0};
  std::atomic<bool> draining_{false};
  std::mutex shutdown_mutex_;
  bool stopped_ = false;  // Guarded by shutdown_mutex_.
};

// One connection: read a request, hand it to the handler, write its reply
// when it comes, then the next request (keep-alive) or close.
class HttpServer::Impl::Session
    : public std::enable_shared_from_this<HttpServer::Impl::Session> {
 public:
  Session(tcp::socket socket, Impl& server)
      : stream_(std::move(socket)), server_(server) {}

  void Start() {
    net::dispatch(stream_.get_executor(),
                  [self = shared_from_this()] { self->Read(); });
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(server_.options().max_body_bytes);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code error,
                                                 size_t) {
                       self->OnRead(error);
                     });
  }

  void OnRead(beast::error_code error) {
    if (error == http::error::body_limit) {
      HttpResponse response;
      response.status = 413;
      response.body = R"({"error": "the request body is too large"})";
      keep_alive_ = false;
      server_.in_flight_counter().fetch_add(1);
      return Write(std::move(response));
    }
    if (error) return Close();
    http::request<http::string_body> request = parser_->release();
    keep_alive_ = request.keep_alive() && !server_.draining();
    HttpRequest forwarded;
    forwarded.method = std::string(request.method_string());
    forwarded.target = std::string(request.target());
    forwarded.body = std::move(request.body());
    for (const auto& field : request) {
      forwarded.headers.emplace_back(std::string(field.name_string()),
                                     std::string(field.value()));
    }
    client_gone_ = std::make_shared<ClientGone>();
    forwarded.client_gone = client_gone_;
    answered_.store(false, std::memory_order_relaxed);
    server_.in_flight_counter().fetch_add(1);
    // The reply comes back on this connection's strand, from any thread.
    server_.handler()(
        std::move(forwarded),
        [hold = ResponderHold(shared_from_this())](HttpResponse response) {
          const std::shared_ptr<Session>& self = hold.session;
          self->answered_.store(true, std::memory_order_release);
          net::post(self->stream_.get_executor(),
                    [self, response = std::move(response)]() mutable {
                      self->Write(std::move(response));
                    });
        });
    // Answered at once (a status, an error): nothing to watch for.
    if (!answered_.load(std::memory_order_acquire)) WatchForHangUp();
  }

  // A responder's hold on its connection, counted by the server until the
  // responder is destroyed (the connection let go first).
  struct ResponderHold {
    explicit ResponderHold(std::shared_ptr<Session> held)
        : session(std::move(held)), server(&session->server_) {
      server->responders().fetch_add(1, std::memory_order_relaxed);
    }
    ResponderHold(ResponderHold&& other) noexcept
        : session(std::move(other.session)),
          server(std::exchange(other.server, nullptr)) {}
    ResponderHold(const ResponderHold&) = delete;
    ResponderHold& operator=(const ResponderHold&) = delete;
    ResponderHold& operator=(ResponderHold&&) = delete;
    ~ResponderHold() {
      session.reset();
      if (server != nullptr) {
        server->responders().fetch_sub(1, std::memory_order_release);
      }
    }

    std::shared_ptr<Session> session;
    Impl* server;
  };

  // The connection turns readable while the request runs: either the
  // client's next request (pipelined) or its end (EOF, reset). Only the
  // end is a client gone; the next request waits for its turn in Read. A
  // readiness with neither (a late edge of the request's own bytes) is
  // watched past, or every busy server would cancel requests whose clients
  // still wait.
  void WatchForHangUp() {
    watching_ = true;
    stream_.socket().async_wait(
        tcp::socket::wait_read,
        [self = shared_from_this(), gone = client_gone_](beast::error_code error) {
          if (error == net::error::operation_aborted) return;  // Answered.
          // Completed before an answer's cancel reached it: stale.
          if (!self->watching_ || self->client_gone_ != gone) return;
          self->watching_ = false;
          if (error) return gone->Notify();
          switch (internal::PeekPeer(self->stream_.socket().native_handle())) {
            case internal::PeerActivity::kSentMore:
              return;
            case internal::PeerActivity::kHungUp:
              return gone->Notify();
            case internal::PeerActivity::kNothing:
              return self->WatchForHangUp();
          }
        });
  }

  void Write(HttpResponse response) {
    if (watching_) {
      watching_ = false;
      beast::error_code ignored;
      stream_.socket().cancel(ignored);
    }
    if (client_gone_) {
      client_gone_->Reset();
      client_gone_.reset();
    }
    if (server_.draining()) keep_alive_ = false;
    auto reply = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), 11);
    reply->set(http::field::server, "asyncrt_model_server");
    reply->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) reply->set(name, value);
    reply->keep_alive(keep_alive_);
    reply->body() = std::move(response.body);
    reply->prepare_payload();
    http::async_write(stream_, *reply,
                      [self = shared_from_this(), reply](beast::error_code error,
                                                         size_t) {
                        self->server_.in_flight_counter().fetch_sub(1);
                        if (error || !self->keep_alive_) return self->Close();
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  // The request being answered: its client-gone signal, whether its answer
  // has been handed over (from any thread), and whether the connection is
  // being watched for a hang-up. All but answered_ live on the strand.
  std::shared_ptr<ClientGone> client_gone_;
  std::atomic<bool> answered_{false};
  bool watching_ = false;
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(
      net::make_strand(io_), [this](beast::error_code error, tcp::socket socket) {
        if (error) {
          if (!acceptor_.is_open()) return;  // Shut down.
        } else if (!draining()) {
          std::make_shared<Session>(std::move(socket), *this)->Start();
        }
        if (acceptor_.is_open()) Accept();
      });
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const Options& options, HttpHandler handler) {
  Options resolved = options;
  if (resolved.num_threads <= 0) {
    resolved.num_threads =
        std::max(1u, std::thread::hardware_concurrency());
  }
  auto impl = std::make_unique<Impl>(resolved, std::move(handler));
  if (absl::Status status = impl->Listen(); !status.ok()) return status;
  impl->Run(resolved.num_threads);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Shutdown(absl::Seconds(30)); }

int HttpServer::port() const { return impl_->port(); }
int64_t HttpServer::in_flight() const { return impl_->in_flight(); }
void HttpServer::Shutdown(absl::Duration timeout) { impl_->Shutdown(timeout); }

}  // namespace asyncrt::serving
