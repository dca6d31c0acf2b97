import AvatarCacheModel
import AvatarCacheSupport
import Foundation
import Glibc
#if canImport(Glibc)
#endif

/// The cache directory on disk: its files, written atomically. The index
/// (`CacheIndex`) and `metadata.json` (`MetadataDocument`) live in it too.
///
/// Every write goes to a temporary name (`.tmp-…`) in the same directory, is flushed
/// with fsync, then renamed over its final name, and the directory itself is synced:
/// a run killed at any instant leaves either the old file or the new one, never half.
/// Leftover temporary files are swept at the start of the next run.
public struct CacheDirectory: Sendable {
    public let root: URL
    public static let metadataName = "metadata.json"
    package static let temporaryPrefix = ".tmp-"

    /// `root.path`, kept: joining names with Foundation's URL costs microseconds a call,
    /// and a merge or a prune asks for hundreds of thousands of paths.
    let rootPath: String

    public init(root: URL) {
        self.root = root.standardizedFileURL
        rootPath = self.root.path
    }

    /// The path of a file of the cache.
    func path(_ name: String) -> String { rootPath.hasSuffix("/") ? rootPath + name : rootPath + "/" + name }

    public var metadataURL: URL { root.appendingPathComponent(Self.metadataName) }

    /// Present while a run is writing; a run killed before it finished leaves it, which
    /// tells `verify` that leftovers and unreferenced files are that run's, not damage.
    public static let runMarkerName = ".run-in-progress"

    /// Files that are the cache's bookkeeping, not its contents (the index, metadata.json,
    /// the lock): they do not count toward the budget, which evicting photos could not
    /// keep them under.
    public static func isBookkeeping(_ name: String) -> Bool {
        name == metadataName || name == CacheLock.fileName || name == runMarkerName || name == AccessJournal.fileName
            || CacheIndex.isIndexFile(name)
    }

    /// Whether this process may write the directory and its file `name` (false on a
    /// read-only mount, or where another user owns them): readers then open the index
    /// read-only and take no lock they cannot create.
    public func isWritable(_ name: String? = nil) -> Bool {
        access(rootPath, W_OK) == 0 && (name.map { access(path($0), W_OK) == 0 || errno == ENOENT } ?? true)
    }

    public var hasInterruptedRun: Bool { fileSize(Self.runMarkerName) != nil }

    /// Written in place, not through a temporary file: a kill while writing it must not
    /// leave a leftover that no marker explains. Its presence is what counts.
    public func markRunStarted() throws {
        let path = root.appendingPathComponent(Self.runMarkerName).path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.io(path: path, reason: Self.errnoText()) }
        defer { close(fd) }
        let text = Array("pid \(getpid()) started \(ISO8601.format(Date()))\n".utf8)
        guard text.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == text.count, fsync(fd) == 0 else {
            throw StoreError.io(path: path, reason: Self.errnoText())
        }
        syncDirectory()
    }

    public func markRunFinished() throws {
        try remove(Self.runMarkerName)
        syncDirectory()
    }

    /// Creates the directory (0755) when missing.
    public func create() throws {
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        } catch {
            throw StoreError.io(path: root.path, reason: "cannot create the cache directory: \(Self.reason(error))")
        }
    }

    /// Cache file name: content SHA-256, tier in pixels, extension.
    public static func fileName(contentSHA256: String, tier: Int, format: OutputFormat) -> String {
        "\(contentSHA256)-\(tier).\(format.fileExtension)"
    }

    /// Whether a name is one of ours (so a sweep may remove it when unreferenced).
    public static func isCacheFileName(_ name: String) -> Bool {
        // <64 lowercase hex>-<digits>.<jpg|png|webp>, checked on the bytes: a prune of a
        // large cache asks this of every file.
        let utf8 = name.utf8
        guard utf8.count > 67, let dot = utf8.lastIndex(of: 46) else { return false }
        let stem = utf8[..<dot], ext = utf8[utf8.index(after: dot)...]
        guard ext.elementsEqual("jpg".utf8) || ext.elementsEqual("png".utf8) || ext.elementsEqual("webp".utf8) else { return false }
        var position = 0, sawDash = false, tierDigits = 0
        for byte in stem {
            if position < 64 {
                guard (48...57).contains(byte) || (97...102).contains(byte) else { return false }
            } else if position == 64 {
                guard byte == 45 else { return false }
                sawDash = true
            } else {
                guard (48...57).contains(byte) else { return false }
                tierDigits += 1
            }
            position += 1
        }
        return sawDash && tierDigits > 0
    }

    /// Writes `bytes` to `name` atomically (mode 0644). `durable` false leaves the flush
    /// to the caller: a batch of files is made durable at once by `syncFilesystem()`,
    /// before anything that names them is committed.
    public func writeAtomically(_ bytes: UnsafeRawBufferPointer, to name: String, durable: Bool = true) throws {
        try writeAtomically(to: name, durable: durable) { write in write(bytes) }
    }

    /// Writes what `produce` hands its `write` function, piece by piece, to `name`
    /// atomically (temporary file, fsync unless not `durable`, rename). `write` returns
    /// false once a write has failed; `produce` returns false to abandon the file.
    public func writeAtomically(to name: String, durable: Bool = true, _ produce: (_ write: (UnsafeRawBufferPointer) -> Bool) -> Bool) throws {
        precondition(!name.contains("/"), "cache names never contain a path separator")
        let temporary = path("\(Self.temporaryPrefix)\(UUID().uuidString)")
        let final = path(name)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.io(path: temporary, reason: Self.errnoText()) }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        var failure: String?
        let produced = produce { bytes in
            guard failure == nil else { return false }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Self.errnoText()
                    return false
                }
                offset += written
            }
            return true
        }
        if failure == nil, !produced { failure = "the contents could not be produced" }
        if failure == nil, durable, fsync(fd) != 0 { failure = Self.errnoText() }
        close(fd)
        if let failure { throw StoreError.io(path: final, reason: failure) }
        guard rename(temporary, final) == 0 else {
            throw StoreError.io(path: final, reason: Self.errnoText())
        }
        ok = true
    }

    public func writeAtomically(_ bytes: [UInt8], to name: String, durable: Bool = true) throws {
        try bytes.withUnsafeBytes { try writeAtomically($0, to: name, durable: durable) }
    }

    /// Makes every file written without `durable`, and the renames that named them,
    /// reach the disk together: one `syncfs` of the cache's filesystem (one journal
    /// commit) instead of an `fsync` a file and a directory sync.
    public func syncFilesystem() throws {
        let fd = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.io(path: root.path, reason: Self.errnoText()) }
        defer { close(fd) }
        if let syncfs = Self.syncfs {
            guard syncfs(fd) == 0 else { throw StoreError.io(path: root.path, reason: Self.errnoText()) }
        } else {
            sync()
        }
    }

    /// glibc's `syncfs`, which Swift's Glibc module does not declare (it is a GNU extension).
    private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()

    /// Makes renames durable: fsync on the directory.
    public func syncDirectory() {
        let fd = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Regular files in the directory with their sizes (readdir and fstatat on the open
    /// directory: a prune of 100,000 entries lists 200,000 files).
    ///
    /// `knownSizes` are sizes the caller already has (a listing made earlier in the same
    /// locked run, and the files it wrote since): those names are not stat'ed again.
    public func listFiles(knownSizes: [String: Int64] = [:]) throws -> [(name: String, size: Int64)] {
        guard let directory = opendir(root.path) else {
            throw StoreError.io(path: root.path, reason: Self.errnoText())
        }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        var files: [(String, Int64)] = []
        var info = stat()
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw StoreError.io(path: root.path, reason: Self.errnoText()) }
                break
            }
            let type = entry.pointee.d_type
            guard type == UInt8(DT_REG) || type == UInt8(DT_UNKNOWN) else { continue }
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if type == UInt8(DT_REG), let size = knownSizes[name] {
                files.append((name, size))
                continue
            }
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append((name, Int64(info.st_size)))
        }
        return files
    }

    /// How `bring` put a file in the cache.
    public enum FileTransfer: Sendable {
        case linked, copied
        /// A file of that name and size was there already (names are content hashes).
        case present
    }

    /// Puts `source`'s file `name` into this directory under the same name, atomically:
    /// a hard link where the filesystem allows (the bytes are shared, not copied; a
    /// later rewrite of either name is a new file, so neither cache can change the
    /// other's), else a copy.
    public func bring(_ name: String, from source: CacheDirectory) throws -> FileTransfer {
        precondition(!name.contains("/"), "cache names never contain a path separator")
        let from = source.path(name)
        let final = path(name)
        // A new name: one link, atomic. One that exists with the size the source's has:
        // the same content. Another file: link beside it and rename over it.
        if link(from, final) == 0 { return .linked }
        let failure = errno
        if failure == EEXIST, let size = fileSize(name), size == source.fileSize(name) { return .present }
        let temporary = path("\(Self.temporaryPrefix)\(UUID().uuidString)")
        if failure == EEXIST {
            guard link(from, temporary) == 0 else { throw StoreError.io(path: from, reason: Self.errnoText()) }
            guard rename(temporary, final) == 0 else {
                let reason = Self.errnoText()
                unlink(temporary)
                throw StoreError.io(path: final, reason: reason)
            }
            return .linked
        }
        // Another filesystem, or one without hard links: copy.
        guard [EXDEV, EPERM, EMLINK, EOPNOTSUPP, ENOTSUP, EACCES].contains(failure) else {
            throw StoreError.io(path: from, reason: String(cString: strerror(failure)))
        }
        guard let data = FileManager.default.contents(atPath: from) else {
            throw StoreError.io(path: from, reason: "cannot read the file")
        }
        try data.withUnsafeBytes { try writeAtomically($0, to: name) }
        return .copied
    }

    /// Size of one file, or nil when it does not exist.
    public func fileSize(_ name: String) -> Int64? {
        var info = stat()
        guard lstat(path(name), &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Removes a file; a file already gone is not an error.
    public func remove(_ name: String) throws {
        if unlink(path(name)) != 0 && errno != ENOENT {
            throw StoreError.io(path: path(name), reason: Self.errnoText())
        }
    }

    /// Removes temporary leftovers and, unless `leftoversOnly`, cache files no entry
    /// references. Returns the names removed. Files that are not ours are left alone.
    @discardableResult
    /// `listing`: a listing taken under the same lock, to save listing the directory again.
    public func sweep(keeping referenced: Set<String>, leftoversOnly: Bool = false,
                      in listing: [(name: String, size: Int64)]? = nil) throws -> [String] {
        var removed: [String] = []
        for file in try listing ?? listFiles() {
            let isLeftover = file.name.hasPrefix(Self.temporaryPrefix)
            let isOrphan = !leftoversOnly && Self.isCacheFileName(file.name) && !referenced.contains(file.name)
            if isLeftover || isOrphan {
                try remove(file.name)
                removed.append(file.name)
            }
        }
        return removed
    }

    package static func errnoText() -> String { String(cString: strerror(errno)) }

    package static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let posix = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return nsError.localizedDescription
    }
}

/// Why the cache could not be read or written.
public enum StoreError: Error, CustomStringConvertible {
    case io(path: String, reason: String)
    case unreadableMetadata(path: String, reason: String)
    /// The index could not be opened, read or written (SQLite's own message).
    case index(path: String, reason: String)
    /// Neither an index nor a metadata.json: not a cache (or a first run killed before
    /// it began).
    case notACache(path: String)
    /// The cache cannot be written here (a read-only mount, another user's directory),
    /// and `action` needs to.
    case readOnly(path: String, action: String)

    public var description: String {
        switch self {
        case let .io(path, reason): return "\(path): \(reason)"
        case let .unreadableMetadata(path, reason):
            return "\(path) cannot be read: \(reason). Nothing was changed. To recover, move it aside (mv \(path) \(path).bad): the next run rebuilds it, re-using every cache file whose photo it downloads again (matched by content hash), and removes the rest."
        case let .index(path, reason):
            return "\(path): \(reason). Nothing was changed. If the index is damaged, move it aside (mv \(path) \(path).bad): the next run rebuilds it from metadata.json and the exports, re-using the cache files."
        case let .notACache(path):
            return "\(path) is not an avatar-cache cache (it has no \(CacheIndex.fileName) and no \(CacheDirectory.metadataName))"
        case let .readOnly(path, action):
            return "\(path) is read-only here (a read-only mount, or a directory this user cannot write): lookup, stats and verify read it, but nothing can \(action)"
        }
    }
}
