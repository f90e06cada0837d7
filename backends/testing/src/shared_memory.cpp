#include "xalsim/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

namespace xalsim {
namespace {

// The heap grows by chunks of the memfd, each mapped where the kernel puts
// it, so that only what the process uses is mapped: a whole-mapping read
// (a debugger's, valgrind's leak check) would commit every page of
// shmem it touches. Chunks are left out of core dumps.
constexpr uint64_t kChunk = uint64_t{256} << 20;
constexpr uint64_t kCapacity = uint64_t{64} << 30;  // of the file, in all

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t round_up(size_t value, size_t unit) { return (value + unit - 1) / unit * unit; }

// The process's memfd heap: first fit over page-rounded ranges, which never
// span two chunks (adjacent addresses of two chunks are not adjacent in the
// file). Lives until the process ends (simulated objects may outlive
// static destructors). Thread-safe.
class Heap {
 public:
  static Heap& get() {
    static Heap* heap = new Heap;
    return *heap;
  }

  // `length` (a multiple of the page size) bytes, or nullptr.
  std::byte* allocate(size_t length) {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) return nullptr;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < length) continue;
      std::byte* start = it->first;
      const uint64_t rest = it->second - length;
      free_.erase(it);
      if (rest > 0) free_.emplace(start + length, rest);
      return start;
    }
    return grow(length);
  }

  // Gives the pages back to the kernel and the range to the free list.
  void release(std::byte* block, size_t length) {
    std::lock_guard lock(mutex_);
    const Chunk& chunk = chunk_of(block);
    (void)fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                    static_cast<off_t>(chunk.offset + (block - chunk.base)),
                    static_cast<off_t>(length));
    std::byte* start = block;
    uint64_t size = length;
    auto next = free_.lower_bound(start);
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start && &chunk_of(prev->first) == &chunk) {
        start = prev->first;
        size += prev->second;
        free_.erase(prev);
      }
    }
    if (next != free_.end() && start + size == next->first && &chunk_of(next->first) == &chunk) {
      size += next->second;
      free_.erase(next);
    }
    free_.emplace(start, size);
  }

  int fd() const { return fd_; }

  // The block's offset in the file.
  uint64_t offset(const std::byte* p) {
    std::lock_guard lock(mutex_);
    const Chunk& chunk = chunk_of(p);
    return chunk.offset + static_cast<uint64_t>(p - chunk.base);
  }

 private:
  struct Chunk {
    std::byte* base;
    uint64_t offset;  // in the file
    uint64_t length;
  };

  Heap() { fd_ = memfd_create("xalsim-device-memory", MFD_CLOEXEC); }

  // A new chunk of at least `length`, whose start is handed out.
  std::byte* grow(size_t length) {
    const uint64_t size = length > kChunk ? length : kChunk;
    if (size > kCapacity - file_size_) return nullptr;
    if (ftruncate(fd_, static_cast<off_t>(file_size_ + size)) != 0) return nullptr;
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_,
                      static_cast<off_t>(file_size_));
    if (base == MAP_FAILED) {
      (void)ftruncate(fd_, static_cast<off_t>(file_size_));
      return nullptr;
    }
    (void)madvise(base, size, MADV_DONTDUMP);
    auto* start = static_cast<std::byte*>(base);
    chunks_.emplace(start, Chunk{start, file_size_, size});
    file_size_ += size;
    if (size > length) free_.emplace(start + length, size - length);
    return start;
  }

  // The chunk holding `p` (one of the heap's blocks).
  const Chunk& chunk_of(const std::byte* p) const {
    auto it = chunks_.upper_bound(const_cast<std::byte*>(p));
    return std::prev(it)->second;
  }

  std::mutex mutex_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  std::map<std::byte*, Chunk> chunks_;     // by base address
  std::map<std::byte*, uint64_t> free_;    // address -> length, coalesced
};

}  // namespace

Block Block::allocate(size_t bytes, size_t alignment) {
  Block block;
  if (bytes == 0) return block;
  const size_t page = page_size();
  const size_t extra = alignment > page ? alignment : 0;
  const size_t length = round_up(bytes + extra, page);
  block.bytes_ = bytes;
  if (std::byte* heap = Heap::get().allocate(length); heap != nullptr) {
    block.kind_ = Kind::kHeap;
    block.base_ = heap;
  } else {
    block.base_ = std::aligned_alloc(page, length);
    if (block.base_ == nullptr) return Block{};
    std::memset(block.base_, 0, length);
    block.kind_ = Kind::kPlain;
  }
  block.length_ = length;
  const auto raw = reinterpret_cast<uintptr_t>(block.base_);
  const uintptr_t align = alignment > page ? alignment : page;
  block.data_ = reinterpret_cast<std::byte*>((raw + align - 1) & ~(align - 1));
  return block;
}

Block Block::open(const SharedRange& range, std::string* error) {
  Block block;
  const std::string path =
      "/proc/" + std::to_string(range.pid) + "/fd/" + std::to_string(range.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return block;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || range.bytes == 0 || range.offset % page_size() != 0 ||
      range.offset > static_cast<uint64_t>(st.st_size) ||
      range.bytes > static_cast<uint64_t>(st.st_size) - range.offset) {
    ::close(fd);
    *error = path + " does not hold the range";
    return block;
  }
  const size_t length = round_up(range.bytes, page_size());
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                    static_cast<off_t>(range.offset));
  const int saved = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    *error = "cannot map " + path + ": " + std::strerror(saved);
    return block;
  }
  block.kind_ = Kind::kRemote;
  block.base_ = base;
  block.length_ = length;
  block.data_ = static_cast<std::byte*>(base);
  block.bytes_ = range.bytes;
  return block;
}

Block::Block(Block&& other) noexcept
    : kind_(std::exchange(other.kind_, Kind::kNone)),
      base_(std::exchange(other.base_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Block& Block::operator=(Block&& other) noexcept {
  if (this != &other) {
    reset();
    kind_ = std::exchange(other.kind_, Kind::kNone);
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Block::~Block() { reset(); }

void Block::reset() {
  switch (kind_) {
    case Kind::kHeap: Heap::get().release(static_cast<std::byte*>(base_), length_); break;
    case Kind::kPlain: std::free(base_); break;
    case Kind::kRemote: munmap(base_, length_); break;
    case Kind::kNone: break;
  }
  kind_ = Kind::kNone;
  base_ = nullptr;
  data_ = nullptr;
}

std::optional<SharedRange> Block::share() const {
  if (kind_ != Kind::kHeap) return std::nullopt;
  SharedRange range;
  range.pid = static_cast<int32_t>(getpid());
  range.fd = Heap::get().fd();
  range.offset = Heap::get().offset(data_);
  range.bytes = bytes_;
  return range;
}

}  // namespace xalsim
