import ArgumentParser

// `--cache` and `--log-level`, declared once, here, for every command that takes them:
// this module is the one both binaries link (the front answers `lookup` without the
// engine's modules), so the engine's commands take them from here with `@OptionGroup`.
// The engine reads their values as it reads every flag, by the setting of the flag's name
// (`Settings.cache`, `Settings.logLevel`); `lookup` reads them here.

/// `--cache <dir>`, the cache a command opens: required (`CacheOption<String>`) for warm,
/// prune, verify, stats and lookup; optional (`CacheOption<String?>`) for run, whose
/// pipeline file names one, and inspect, which opens none.
public struct CacheOption<Value: CacheOptionValue>: ParsableArguments {
    /// The flag without its dashes.
    public static var flag: String { "cache" }

    /// The path given (nil when an optional one was not).
    public var cache: Value { _cache.wrappedValue }

    // The option's storage and its coding key as `@Option var cache: Value` would make
    // them, written out: a property wrapper's initial value cannot choose, by `Value`,
    // between the initializer of a required option and that of an optional one.
    private var _cache: Option<Value>
    private enum CodingKeys: String, CodingKey { case cache }

    public init() {
        _cache = Value.cacheOption(name: .customLong(Self.flag), help: ArgumentHelp(Value.cacheOptionHelp, valueName: "dir"))
    }

    public init(from decoder: any Decoder) throws {
        _cache = try decoder.container(keyedBy: CodingKeys.self).decode(Option<Value>.self, forKey: .cache)
    }
}

/// What `--cache` holds: a path (the option required), or an optional one.
public protocol CacheOptionValue: Sendable {
    /// The option, required or not as the type says.
    static func cacheOption(name: NameSpecification, help: ArgumentHelp) -> Option<Self>
    /// The help, as a command that requires the cache or one that may be given it reads it.
    static var cacheOptionHelp: String { get }
}

extension String: CacheOptionValue {
    public static func cacheOption(name: NameSpecification, help: ArgumentHelp) -> Option<String> {
        Option(name: name, help: help)
    }
    public static var cacheOptionHelp: String { "The cache directory (warm makes it when missing)." }
}

extension Optional: CacheOptionValue where Wrapped == String {
    public static func cacheOption(name: NameSpecification, help: ArgumentHelp) -> Option<String?> {
        Option(name: name, help: help)
    }
    public static var cacheOptionHelp: String { "The cache directory: run's overrides its pipeline file's; inspect's is not opened." }
}

/// `--log-level <level>`: how much a command logs on stderr, for every command that
/// opens a cache (and inspect, which takes warm's command line).
public struct LogLevelOption: ParsableArguments {
    /// The flag without its dashes.
    public static var flag: String { "log-level" }

    /// The levels, most to least said: swift-log's `Logger.Level` names, which the engine
    /// reads with them (a test holds the two lists equal).
    public static let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// The level when none is given: `info`, but for merge and verify, whose results are
    /// their output, `warning`.
    public static let defaultLevel = "info"
    public static let quietDefaultLevel = "warning"

    /// The help: each command's default, as one declaration cannot say only its own.
    public static let help = "How much is logged on stderr. Values: \(levels.joined(separator: ", ")). "
        + "Default: \(defaultLevel) (merge and verify: \(quietDefaultLevel))."

    @Option(name: .customLong(flag), help: ArgumentHelp(help, valueName: "level"), completion: .list(levels))
    public var logLevel: String?

    public init() {}

    /// A wrong level is bad usage (64), in the words the engine's setting refuses it in.
    public func validate() throws {
        if let problem = Self.problem(of: logLevel) { throw ValidationError(problem) }
    }

    /// Whether a message at `level` is logged when `given` is the level given (nil: the
    /// default): it is the level given or one of less said. A level the engine's or the
    /// lookup's validation refuses before a command runs never gets here.
    public static func logs(_ level: String, given: String?, default fallback: String = defaultLevel) -> Bool {
        (levels.firstIndex(of: normalized(given ?? fallback)) ?? 0) <= (levels.firstIndex(of: level) ?? levels.count)
    }

    /// The words a wrong level is refused in, as the engine's `--log-level` refuses it;
    /// nil for a level it takes (or none given).
    public static func problem(of given: String?) -> String? {
        guard let given, !levels.contains(normalized(given)) else { return nil }
        return "--\(flag): expected one of \(levels.joined(separator: ", ")), found \"\(given)\""
    }

    /// A level as the engine's setting reads it: spaces around it aside, in any case.
    static func normalized(_ text: String) -> String {
        String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()).lowercased()
    }
}
