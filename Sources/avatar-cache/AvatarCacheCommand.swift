import ArgumentParser
import AvatarCache
import Foundation
import Logging

@main
struct AvatarCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "avatar-cache",
        abstract: "Prepare avatar caches ahead of time: read profile exports, download photos, resize them with libvips, prune to budget.",
        discussion: """
            Exit codes: 0 success (per-source failures are in the report); 64 bad usage or \
            configuration; 65 an export cannot be read; 66 lookup: not in the cache; \
            73 the cache cannot be read or written; 75 the cache is locked by another run.
            """,
        version: AvatarCacheVersion.string,
        subcommands: [Warm.self, Prune.self, Lookup.self]
    )

    static func main() async {
        // Two malloc arenas keep RSS flat under libvips (an explicit
        // MALLOC_ARENA_MAX in the environment still wins).
        if ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] == nil {
            Vips.limitMallocArenas(2)
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

/// The documented exit codes (README, "Exit codes").
enum ExitCodes {
    static let success = ExitCode(0)
    static let usage = ExitCode(64)
    static let unreadableExport = ExitCode(65)
    static let notInCache = ExitCode(66)
    static let cacheUnusable = ExitCode(73)
    static let locked = ExitCode(75)

    /// Maps a run-level error to its exit code, after printing it.
    static func fail(_ error: Error) -> ExitCode {
        let standardError = FileHandle.standardError
        standardError.write(Data("avatar-cache: error: \(error)\n".utf8))
        switch error {
        case is ConfigurationError, is ImagingError: return usage
        case is ExportError: return unreadableExport
        case is CacheLockedError: return locked
        case is CacheLookup.NotFound: return notInCache
        case is StoreError: return cacheUnusable
        default: return cacheUnusable
        }
    }
}

/// Options every subcommand that touches a cache shares.
struct CacheOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cache directory (created when missing).", valueName: "dir"))
    var cache: String

    @Option(name: .long, help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error.", valueName: "level"))
    var logLevel: Logger.Level = .info

    var cacheURL: URL { URL(fileURLWithPath: cache) }

    func makeLogger() -> Logger {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "avatar-cache")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A byte count argument: `100MB`, `512KB`, `2GB` (powers of 1,000), `64MiB` (1,024).
struct ByteCount: ExpressibleByArgument {
    var bytes: Int64

    init(bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        guard let bytes = ByteSize.parse(argument) else { return nil }
        self.bytes = bytes
    }

    var defaultValueDescription: String { ByteSize.format(bytes).replacingOccurrences(of: " ", with: "").replacingOccurrences(of: ".0", with: "") }
}

extension ExportFormat: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}

/// The Monica token: from a file or the environment, never from the command line
/// (where every user of the machine could read it in the process list).
enum MonicaToken {
    static let environmentVariable = "AVATAR_CACHE_MONICA_TOKEN"

    static func load(host: String?, tokenFile: String?) throws -> MonicaCredential? {
        var token: String?
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw ConfigurationError(message: "--monica-token-file \(tokenFile): cannot read the file")
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let value = ProcessInfo.processInfo.environment[environmentVariable] {
            token = value.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let token, !token.isEmpty else {
            if tokenFile != nil { throw ConfigurationError(message: "--monica-token-file is empty") }
            return nil
        }
        guard let host, !host.isEmpty else {
            throw ConfigurationError(message: "a Monica token is set but --monica-host is not: the token is only ever sent to that host")
        }
        guard !host.contains("/"), !host.contains("@") else {
            throw ConfigurationError(message: "--monica-host takes host or host:port, not a URL")
        }
        return MonicaCredential(host: host, token: token)
    }
}
