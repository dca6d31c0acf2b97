import ArgumentParser
import AvatarCache
import AvatarCacheLookupCommand
import Foundation
import Logging
import Synchronization

@main
struct AvatarCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "avatar-cache",
        abstract: "Prepare avatar caches ahead of time: read profile exports, download photos, resize them with libvips, prune to budget.",
        discussion: """
            Exit codes: 0 success (per-source failures are in the report); 3 more sources failed \
            than --max-failure-rate allows; 4 verify found problems; 5 an input held fewer records than it \
            states (a Firestore export's metadata, Monica's meta.total, a vCard file's cards) beyond what \
            --max-failure-rate allows; 64 bad usage or configuration; \
            65 an export cannot be read; 66 lookup: not in the cache; 70 avatar-cache cannot find or start \
            its engine (an incomplete installation); 73 the cache cannot be read or \
            written; 74 the run is done and the cache saved, but a report, metrics or step-summary \
            file could not be written; 75 the cache is locked by another run; 130/143 stopped by SIGINT/SIGTERM \
            (what was done is saved).
            """,
        version: AvatarCacheVersion.string,
        subcommands: [Warm.self, Inspect.self, Run.self, Merge.self, Prune.self, Verify.self, Stats.self, Lookup.self]
    )

    static func main() async {
        // One malloc arena keeps RSS flat under libvips (an explicit MALLOC_ARENA_MAX in
        // the environment still wins).
        if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil {
            Vips.limitMallocArenas()
        }
        // Freed decode buffers re-used from the heap, not mapped fresh for every photo
        // (MALLOC_MMAP_THRESHOLD_ in the environment wins).
        if ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] == nil {
            Vips.reuseFreedMemory()
        }
        // A cache written before the index: imported (under the lock) before the lookup
        // library reads it.
        Lookup.prepareCache = { root in
            if Lookup.needsImport(root) { try CacheStore.importOlderCache(CacheDirectory(root: root)) }
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// The documented exit codes (docs/guide.md, "Exit codes").
enum ExitCodes {
    static let success = ExitCode(0)
    static let failureRateExceeded = ExitCode(3)
    static let integrityFailure = ExitCode(4)
    static let recordsLost = ExitCode(5)
    static let usage = ExitCode(64)
    static let unreadableExport = ExitCode(65)
    static let notInCache = Lookup.notInCache
    static let cacheUnusable = Lookup.cacheUnusable
    static let outputNotWritten = ExitCode(74)
    static let locked = ExitCode(75)

    /// How `fail` prints: as the run's log lines are (`--log-format`, or the pipeline
    /// file's `log-format`), set as soon as a command knows it.
    static var errorFormat: LogFormat {
        get { errorFormatSet.withLock { $0 } }
        set { errorFormatSet.withLock { $0 = newValue } }
    }
    private static let errorFormatSet = Mutex(LogFormat.text)

    /// Maps a run-level error to its exit code, after printing it: a line of text, or with
    /// JSON logs a JSON line like the others (time, level, message, exitCode).
    static func fail(_ error: Error) -> ExitCode {
        let code = exitCode(for: error)
        switch errorFormat {
        case .text:
            FileHandle.standardError.write(Data("avatar-cache: error: \(error)\n".utf8))
        case .json:
            LineLogHandler(label: "avatar-cache", format: .json, level: .error, progress: nil)
                .write(level: .error, message: "\(error)", metadata: ["exitCode": .stringConvertible(Int(code.rawValue))])
        }
        return code
    }

    static func exitCode(for error: Error) -> ExitCode {
        switch error {
        case is ConfigurationError, is ImagingError, is PipelineFile.Error, is PipelineFile.Errors: return usage
        case is ExportError: return unreadableExport
        case is CacheLockedError: return locked
        case _ where Lookup.isNotInCache(error): return notInCache
        default: return cacheUnusable
        }
    }
}
