// TypeId: a process-wide identity for a C++ type that needs no RTTI.
#ifndef ASYNCRT_SUPPORT_TYPE_ID_H_
#define ASYNCRT_SUPPORT_TYPE_ID_H_

namespace asyncrt {

// Opaque, comparable identity of a type. Identities are the addresses of
// inline variables, unique within a program; a plug-in loaded with dlopen
// shares them when it resolves symbols against the executable (the default
// for bef_executor's --shared_libs).
class TypeId {
 public:
  template <typename T>
  static TypeId Get() {
    return TypeId(&Tag<T>::kTag);
  }
  friend bool operator==(TypeId a, TypeId b) { return a.id_ == b.id_; }
  const void* opaque() const { return id_; }

 private:
  template <typename T>
  struct Tag {
    static constexpr char kTag = 0;
  };
  explicit TypeId(const void* id) : id_(id) {}
  const void* id_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_SUPPORT_TYPE_ID_H_
