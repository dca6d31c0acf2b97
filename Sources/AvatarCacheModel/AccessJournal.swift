#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The accesses of lookups that end (a `lookup` process, a released `CacheLookup`):
/// appended to `access-journal` in the cache directory, a line each (`<seconds since
/// 1970>\t<entry key>\n`), one `write(2)` and no `fsync`, where a write into the index
/// would cost a transaction, its log and a checkpoint (four `fsync`s: about half of a
/// lookup process's own time). Folded into the index by the lookup that finds it past
/// `foldSize` (when no warm holds the index), and by a warm, run, prune, merge or
/// `verify --repair` before it prunes. So a lookup never waits for a warm, its access
/// still counts for the prune, and the journal stays small.
///
/// Bounded: past `limit` bytes an access is not appended (the prune then sees an older
/// access time for it, nothing worse). Folding takes the journal under a name of its own
/// first (a rename), so lookups appending meanwhile start a new one; one appending at that
/// very instant may be lost, nothing else.
public enum AccessJournal {
    public static let fileName = "access-journal"

    /// The journal's path in the cache at `directory`.
    public static func path(inCacheAt directory: String) -> String { directory + "/" + fileName }
    /// The prefix of a journal taken for folding (`.tmp-`: a fold killed before it removed
    /// it leaves a leftover the next run sweeps).
    static let takenPrefix = ".tmp-access-journal-"
    /// 1 MB: about 12,000 accesses of photo URLs, more of monograms.
    public static let limit = 1_000_000
    /// 64 KB (about 750 accesses): the size past which the lookup that appended folds the
    /// journal into the index (one lookup in hundreds pays for a transaction).
    public static let foldSize = 65_536

    /// Appends `accesses` (entry key -> seconds since 1970) in one `write(2)` with
    /// `O_APPEND`, so that lines of processes appending at once never mix. Returns false
    /// when the journal is full or cannot be written (nothing is then recorded).
    @discardableResult
    public static func append(_ accesses: [String: Double], toCacheAt directory: String) -> Bool {
        appended(accesses, toCacheAt: directory) != nil
    }

    /// ``append(_:toCacheAt:)``, returning the journal's size after it (bytes), or nil
    /// when nothing was appended (the journal full, or not writable). No `fsync`: an
    /// access is an LRU hint, and a crash that loses the last ones loses nothing cached.
    public static func appended(_ accesses: [String: Double], toCacheAt directory: String) -> Int? {
        var text = ""
        for (key, time) in accesses where !key.contains("\n") && !key.contains("\t") {
            text += "\(time)\t\(key)\n"
        }
        let descriptor = open(path(inCacheAt: directory), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        guard !text.isEmpty else { return Int(status.st_size) }
        guard Int(status.st_size) + text.utf8.count <= limit else { return nil }
        let written = text.withUTF8 { write(descriptor, $0.baseAddress, $0.count) }
        return written == text.utf8.count ? Int(status.st_size) + written : nil
    }

    /// A journal taken for folding: its accesses (the latest of each key), and the file to
    /// remove once they are committed.
    public struct Taken: Sendable {
        public var accesses: [String: Double]
        public var path: String

        /// Removes the taken journal (after the commit that folded it).
        public func remove() { unlink(path) }
    }

    /// Takes the journal of the cache at `directory`, if there is one: renamed to a name of
    /// its own, then read. A line that does not read (a torn write of a process killed
    /// mid-append) is skipped.
    public static func take(fromCacheAt directory: String) -> Taken? {
        let journal = path(inCacheAt: directory)
        guard access(journal, F_OK) == 0 else { return nil }
        let taken = directory + "/" + takenPrefix + "\(getpid())-\(UInt32.random(in: 0 ... .max))"
        guard rename(journal, taken) == 0 else { return nil }
        guard let file = fopen(taken, "r") else { return Taken(accesses: [:], path: taken) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let read = fread(&buffer, 1, buffer.count, file)
            if read <= 0 { break }
            bytes.append(contentsOf: buffer[0..<read])
        }
        // Whole lines only: a process killed mid-append leaves a line without its end.
        let whole = bytes.lastIndex(of: UInt8(ascii: "\n")).map { bytes[...$0] } ?? []
        var accesses: [String: Double] = [:]
        for line in whole.split(separator: UInt8(ascii: "\n")) {
            guard let tab = line.firstIndex(of: UInt8(ascii: "\t")),
                  let time = Double(String(decoding: line[line.startIndex..<tab], as: UTF8.self)) else { continue }
            let key = String(decoding: line[(tab + 1)...], as: UTF8.self)
            guard !key.isEmpty else { continue }
            accesses[key] = max(accesses[key] ?? 0, time)
        }
        return Taken(accesses: accesses, path: taken)
    }
}
