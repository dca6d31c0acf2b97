import ArgumentParser
import AvatarCacheLookup
import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// `avatar-cache lookup`: run by the `avatar-cache` front binary itself, which links only
/// AvatarCacheLookup (every other command is handed to the engine), and listed by the
/// engine's command for its help, man pages and completions.
public struct Lookup: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        abstract: "Print the file to draw for a user or a photo URL, for a view of a given size.",
        discussion: """
            The tier is the smallest at least max(size × 2, s) points × --scale, else the largest, \
            s being the smallest --size the cache's warm was given (110 by default). \
            Counts as an access for the prune (recorded in the cache's index). \
            Exit code 66 when the user or URL is not in the cache.
            """
    )

    @OptionGroup var cache: CacheOption<String>

    @Option(help: ArgumentHelp("A user id from an export (a message's sender id).", valueName: "id"))
    var user: String?

    @Option(help: ArgumentHelp("A photo URL.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("The view size in points.", valueName: "pt"))
    var size = Request.defaultSize

    @Option(help: ArgumentHelp("Pixels per point of the screen (any density: 1, 1.5, 2.625, 3; from 0.5 to 8).", valueName: "n"))
    var scale = Request.defaultScale

    @Flag(help: "Print JSON: initials, color, textColor, file, kind (photo, monogram or none), tier, placeholder.")
    var json = false

    @OptionGroup var log: LogLevelOption

    @Option(help: ArgumentHelp("Time the library's lookup: answer the same question this many more times in this process and print the median and slowest to stderr (scripts/bench-scale).", valueName: "n"))
    var repeatCount = 0

    public func validate() throws {
        if let problem = request.problem { throw ValidationError(problem) }
    }

    public func run() async throws {
        try request.run()
    }

    var request: Request {
        Request(cache: cache.cache, user: user, url: url, size: size, scale: scale, json: json, repeatCount: repeatCount, logLevel: log.logLevel)
    }

    /// A lookup's arguments, parsed or not.
    public struct Request: Sendable {
        static let defaultSize: Double = 55
        static let defaultScale = 3.0

        var cache: String
        var user: String?
        var url: String?
        var size = defaultSize
        var scale = defaultScale
        var json = false
        var repeatCount = 0
        /// `--log-level`: at `debug`, which index was opened and whether the access is
        /// recorded (never a path's contents or an answer's).
        var logLevel: String?

        /// What `validate` refuses, in its words; nil when the request may run.
        var problem: String? {
            if (user == nil) == (url == nil) { return "give exactly one of --user and --url" }
            if let problem = CacheLookup.problem(viewSize: size, scale: scale) {
                // The library's words, with the option's name: "--size must be at most 100000 points (got 100001)".
                for (words, option) in [("the view size", "--size"), ("the scale", "--scale")] where problem.hasPrefix(words) {
                    return option + problem.dropFirst(words.count)
                }
                return problem
            }
            if !(0...1_000_000).contains(repeatCount) { return "--repeat-count must be between 0 and 1000000" }
            return LogLevelOption.problem(of: logLevel)
        }

        /// The arguments after `lookup` in the forms a script or service passes them
        /// (`--name value`, `--name=value`, `--json`; each once, no value starting with
        /// "-"), valid as `validate` has them; nil for anything else (help, a mistake, a
        /// repeated option), which swift-argument-parser then parses and answers. Skipping
        /// its reflection over the command's properties is a measurable share of a lookup
        /// process (docs/performance-notes.md, "The lookup process").
        public static func parseCommonForm(_ arguments: [String]) -> Request? {
            var values: [String: String] = [:]
            var json = false
            var index = 0
            // An array, not a Set: a process that makes no Set<String> skips the runtime's
            // search of every conformance record for it (a few per cent of a lookup process).
            let valued = [CacheOption<String>.flag, "user", "url", "size", "scale", "repeat-count", LogLevelOption.flag]
            while index < arguments.count {
                let argument = arguments[index]
                guard argument.hasPrefix("--") else { return nil }
                var name = String(argument.dropFirst(2))
                var value: String?
                if let equals = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                if name == "json", value == nil, !json {
                    json = true
                    index += 1
                    continue
                }
                guard valued.contains(name), values[name] == nil else { return nil }
                if value == nil {
                    index += 1
                    guard index < arguments.count else { return nil }
                    value = arguments[index]
                }
                guard let value, !value.hasPrefix("-"), !value.isEmpty else { return nil }
                values[name] = value
                index += 1
            }
            guard let cache = values[CacheOption<String>.flag] else { return nil }
            var request = Request(cache: cache, user: values["user"], url: values["url"], json: json, logLevel: values[LogLevelOption.flag])
            if let size = values["size"] { guard let parsed = Double(size) else { return nil }; request.size = parsed }
            if let scale = values["scale"] { guard let parsed = Double(scale) else { return nil }; request.scale = parsed }
            if let count = values["repeat-count"] { guard let parsed = Int(count) else { return nil }; request.repeatCount = parsed }
            return request.problem == nil ? request : nil
        }

        /// Answers, printing as `avatar-cache lookup` does; throws the exit code of a failure
        /// (after printing it).
        public func run() throws {
            let answer: CacheLookup.Answer
            let lookup: CacheLookup
            do {
                let directory = URL(fileURLWithPath: cache, isDirectory: true)
                try Lookup.prepareCache?(directory)
                lookup = try CacheLookup(cache: directory)
                if LogLevelOption.logs("debug", given: logLevel) { writeToStandardError("avatar-cache: debug: opened \(directory.appendingPathComponent(CacheLookup.indexName).path)\n") }
                let ask = { try user.map { try lookup.blocking.answer(forUser: $0, viewSize: size, scale: scale) }
                    ?? lookup.blocking.answer(forPhotoURL: url ?? "", viewSize: size, scale: scale) }
                answer = try ask()
                if repeatCount > 0 {
                    var times: [Double] = []
                    for _ in 0..<repeatCount {
                        let start = ContinuousClock.now
                        _ = try ask()
                        let time = ContinuousClock.now - start
                        times.append(Double(time.components.seconds) * 1e3 + Double(time.components.attoseconds) / 1e15)
                    }
                    times.sort()
                    writeToStandardError(formatted("%d lookups in one process: median %.3f ms, p99 %.3f ms, slowest %.3f ms\n",
                                                   repeatCount, times[times.count / 2], times[min(times.count - 1, times.count * 99 / 100)], times.last!))
                }
            } catch {
                throw Lookup.fail(error)
            }
            if json {
                try printJSON(answer)
            } else if let file = answer.file {
                print(file.path)
            } else {
                print("no cached image: draw \(answer.initials ?? "??") in \(answer.textColor ?? "") on \(answer.color ?? "")")
            }
            // Recorded now rather than as the lookup is released, to say where it went.
            if LogLevelOption.logs("debug", given: logLevel), let kept = lookup.finishRecording() {
                writeToStandardError("avatar-cache: debug: \(Self.note(kept))\n")
            }
        }

        /// What became of this lookup's access, in words.
        static func note(_ kept: AccessesKept) -> String {
            switch kept {
            case .none: "no entry answered: no access to record"
            case let .journal(path): "the access is recorded for the prune (in \(path))"
            case let .index(path): "the access is recorded for the prune (in \(path))"
            case .notKept: "the access is not recorded: the cache is read-only here (neither its access journal nor its index can be written)"
            }
        }
    }

    /// Whether the cache in `root` was written before the index (metadata.json alone).
    public static func needsImport(_ root: URL) -> Bool { CacheLookup.isWrittenBeforeIndex(root) }

    /// The documented exit codes of a lookup: 66 when the user or URL is not in the cache,
    /// 73 when the cache cannot be read; the error printed as the engine prints it.
    static func fail(_ error: Error) -> ExitCode {
        writeToStandardError("avatar-cache: error: \(error)\n")
        return exitCode(for: error)
    }

    /// Whether `error` says the user or URL asked for is not in the cache (exit 66): the
    /// engine asks this of the errors it prints, and links the lookup library only here.
    public static func isNotInCache(_ error: Error) -> Bool {
        if case LookupError.notFound = error { return true }
        return false
    }

    public static func exitCode(for error: Error) -> ExitCode {
        switch error {
        case LookupError.notFound: return notInCache
        case LookupError.invalidArgument: return ExitCode(64)
        default: return cacheUnusable
        }
    }

    /// Run before a lookup opens its cache, by the engine: imports a cache written before
    /// the index (which the lookup library reads but does not write). The front binary
    /// sets none, and hands such a cache to the engine (`LookupError.needsUpgrade`).
    public static var prepareCache: (@Sendable (URL) throws -> Void)? {
        get { preparation.withLock { $0 } }
        set { preparation.withLock { $0 = newValue } }
    }
    private static let preparation = Mutex<(@Sendable (URL) throws -> Void)?>(nil)

    /// The user or URL is not in the cache.
    public static let notInCache = ExitCode(66)
    /// The cache cannot be read.
    public static let cacheUnusable = ExitCode(73)
}

/// Prints a value as pretty, key-sorted JSON on stdout (`--json` outputs).
public func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
