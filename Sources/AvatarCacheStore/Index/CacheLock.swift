import Foundation
import Glibc
#if canImport(Glibc)
#endif

/// One run at a time per cache: an exclusive `flock` on `<cache>/.lock`, held for the
/// whole run and released by the kernel if the process dies.
public final class CacheLock: Sendable {
    public static let fileName = ".lock"
    /// -1: nothing held (a cache this process cannot write and that has no lock file).
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock, waiting up to `wait` seconds (0: fail at once). In a cache this
    /// process cannot write (a read-only mount, another user's directory) the lock file
    /// is locked through a read-only descriptor (flock needs no write access); where it
    /// cannot be made either, nothing is held: such a reader writes nothing.
    public static func acquire(in directory: CacheDirectory, wait: TimeInterval = 0) throws -> CacheLock {
        let path = directory.root.appendingPathComponent(fileName).path
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 && (errno == EROFS || errno == EACCES) {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd < 0 && errno == ENOENT && !directory.isWritable() { return CacheLock(descriptor: -1) }
        }
        guard fd >= 0 else { throw StoreError.io(path: path, reason: CacheDirectory.errnoText()) }
        let deadline = Date().addingTimeInterval(wait)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = CacheDirectory.errnoText()
                close(fd)
                throw StoreError.io(path: path, reason: reason)
            }
            if Date() >= deadline {
                close(fd)
                throw CacheLockedError(path: directory.root.path)
            }
            usleep(100_000)
        }
        return CacheLock(descriptor: fd)
    }

    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

/// Another run holds the cache.
public struct CacheLockedError: Error, CustomStringConvertible {
    public var path: String
    public var description: String {
        "the cache \(path) is in use by another avatar-cache run; try again when it has finished"
    }
}
