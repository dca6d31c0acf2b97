import Foundation

/// Records what each hostile-input case tried and what the tool did, when
/// `AVATAR_CACHE_HOSTILE_REPORT` names a file (scripts/hostile-report sets it and turns
/// the lines into the README's table). Recording happens after the case's assertions.
package enum HostileLedger {
    package struct Case: Codable {
        var area: String
        var name: String
        var tried: String
        var count: Int
        var outcome: String
        var crashes = 0
        var hangs = 0
        var inconsistentCaches = 0
        var secretsLeaked = 0
    }

    private static let lock = NSLock()

    package static func record(_ area: String, _ name: String, tried: String, count: Int, outcome: String,
                       crashes: Int = 0, hangs: Int = 0, inconsistentCaches: Int = 0, secretsLeaked: Int = 0) {
        guard let path = ProcessInfo.processInfo.environment["AVATAR_CACHE_HOSTILE_REPORT"] else { return }
        let entry = Case(area: area, name: name, tried: tried, count: count, outcome: outcome, crashes: crashes,
                         hangs: hangs, inconsistentCaches: inconsistentCaches, secretsLeaked: secretsLeaked)
        guard let data = try? JSONEncoder().encode(entry) else { return }
        lock.withLock {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            if let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(data + Data("\n".utf8))
                try? handle.close()
            }
        }
    }
}
