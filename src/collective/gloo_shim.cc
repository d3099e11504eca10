// The C face of Gloo that src/collective/gloo.rs binds: make a context of `size` ranks over
// Gloo's TCP transport, whose rendezvous goes through a store implemented in Rust (callbacks),
// sum float32 buffers in place across the ranks, wait at a barrier, free the context.
// Every Gloo exception is caught here and returned as a status and a message: no C++
// exception ever crosses into Rust.

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

extern "C" {

// The rendezvous store, implemented by the caller. Each call returns 0 on success; `get`
// hands back a buffer from malloc that the shim frees; `wait` returns once every key is set,
// or non-zero when `timeout_ms` passes first.
struct mk_store_callbacks {
  void* user;
  int (*set)(void* user, const char* key, size_t key_len, const char* data, size_t data_len);
  int (*get)(void* user, const char* key, size_t key_len, char** data, size_t* data_len);
  int (*wait)(void* user, const char* const* keys, const size_t* key_lens, size_t n, int64_t timeout_ms);
};

}  // extern "C"

namespace {

void write_error(char* err, size_t err_len, const char* text) {
  if (err == nullptr || err_len == 0) {
    return;
  }
  std::strncpy(err, text, err_len - 1);
  err[err_len - 1] = '\0';
}

// A Gloo store whose operations are the caller's callbacks; a failed callback becomes the
// exception Gloo's rendezvous expects, which the entry points below catch.
class CallbackStore : public gloo::rendezvous::Store {
 public:
  CallbackStore(const mk_store_callbacks& cb, std::chrono::milliseconds timeout)
      : cb_(cb), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    if (cb_.set(cb_.user, key.data(), key.size(), data.data(), data.size()) != 0) {
      throw gloo::IoException("rendezvous: could not store key " + key);
    }
  }

  std::vector<char> get(const std::string& key) override {
    wait({key}, timeout_);
    char* data = nullptr;
    size_t len = 0;
    if (cb_.get(cb_.user, key.data(), key.size(), &data, &len) != 0) {
      throw gloo::IoException("rendezvous: could not read key " + key);
    }
    std::vector<char> out(data, data + len);
    std::free(data);
    return out;
  }

  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }

  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& k : keys) {
      ptrs.push_back(k.data());
      lens.push_back(k.size());
    }
    if (cb_.wait(cb_.user, ptrs.data(), lens.data(), keys.size(), timeout.count()) != 0) {
      throw gloo::IoException("rendezvous: the other workers did not arrive within " +
                              std::to_string(timeout.count() / 1000) + " s");
    }
  }

 private:
  mk_store_callbacks cb_;
  std::chrono::milliseconds timeout_;
};

struct Handle {
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::chrono::milliseconds timeout;
};

}  // namespace

extern "C" {

// A context of `size` ranks, this one `rank`, its TCP transport bound to `hostname`. Blocks
// until every rank has joined, or `timeout_ms` passes (then null, with the message in `err`).
void* mk_gloo_new(int rank, int size, const mk_store_callbacks* cb, const char* hostname,
                  int64_t timeout_ms, char* err, size_t err_len) {
  try {
    auto timeout = std::chrono::milliseconds(timeout_ms);
    gloo::transport::tcp::attr attr(hostname);
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    CallbackStore store(*cb, timeout);
    context->connectFullMesh(store, device);
    return new Handle{context, timeout};
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
  } catch (...) {
    write_error(err, err_len, "unknown error while joining the Gloo context");
  }
  return nullptr;
}

// Sums `data[0..n]` across every rank, in place; every rank gets the same bits.
int mk_gloo_allreduce_f32(void* handle, float* data, size_t n, char* err, size_t err_len) {
  try {
    auto* h = static_cast<Handle*>(handle);
    gloo::AllreduceOptions opts(h->context);
    opts.setOutput(data, n);
    opts.setTimeout(h->timeout);
    void (*fn)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
    opts.setReduceFunction(fn);
    gloo::allreduce(opts);
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
  } catch (...) {
    write_error(err, err_len, "unknown error in the Gloo all-reduce");
  }
  return 1;
}

// Returns once every rank has called it.
int mk_gloo_barrier(void* handle, char* err, size_t err_len) {
  try {
    auto* h = static_cast<Handle*>(handle);
    gloo::BarrierOptions opts(h->context);
    opts.setTimeout(h->timeout);
    gloo::barrier(opts);
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
  } catch (...) {
    write_error(err, err_len, "unknown error in the Gloo barrier");
  }
  return 1;
}

void mk_gloo_free(void* handle) {
  try {
    delete static_cast<Handle*>(handle);
  } catch (...) {
  }
}

}  // extern "C"
