import AvatarCacheExports
import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// One setting of a run, defined once: its pipeline key (also its flag), the form of its
/// value and the range it must be in, its default, its help, and where it lands in a
/// `WarmConfiguration`. The CLI's options, the pipeline-file reader, validation and the
/// help's defaults all come from the table of them (`Settings`).
public struct Setting<Value: Hashable & Sendable>: Sendable {
    /// The pipeline key, and the long flag unless `flag` says otherwise.
    public let key: String
    /// The long flag, without its dashes (`size` for the key `sizes`: one per flag).
    public let flag: String
    /// Other keys a pipeline file may use (`size` for `sizes`).
    public let otherKeys: [String]
    /// How the value is written, what it may be, and how it is shown.
    public let form: SettingForm<Value>
    /// The value when nothing is said; nil when there is none.
    public let initial: Value?
    /// The default in words when it is not a value (`the number of cores`, `never`).
    let initialInWords: String?
    /// One sentence or two, without the default (added from `initial`).
    let summary: String
    /// The value's name in the help (`<size>`).
    public let valueName: String
    /// Where the value lands in a run's configuration, if it does.
    let binding: ConfigurationBinding<Value>?

    /// Whether the help leaves the default out (a flag that is off unless given).
    let helpOmitsDefault: Bool

    init(_ key: String, flag: String? = nil, otherKeys: [String] = [], _ form: SettingForm<Value>,
         default initial: Value? = nil, defaultInWords: String? = nil, helpOmitsDefault: Bool = false,
         help: String, valueName: String, binding: ConfigurationBinding<Value>? = nil) {
        self.helpOmitsDefault = helpOmitsDefault
        self.key = key
        self.flag = flag ?? key
        self.otherKeys = otherKeys
        self.form = form
        self.initial = initial
        self.initialInWords = defaultInWords
        self.summary = help
        self.valueName = valueName
        self.binding = binding
    }

    /// The default; only for settings that have one (a test walks the table).
    public var defaultValue: Value {
        guard let initial else { preconditionFailure("the setting \(key) has no default") }
        return initial
    }

    /// The default as the help shows it, if there is one.
    public var defaultText: String? {
        if helpOmitsDefault { return nil }
        return initialInWords ?? initial.map { form.written($0).joined(separator: " and ") }
    }

    /// The help: the summary, the choices when there are a few, and the default.
    public var help: String {
        var text = summary
        if let choices = form.choices { text += " Values: \(choices.joined(separator: ", "))." }
        if let defaultText { text += " Default: \(defaultText)." }
        return text
    }

    /// The value as written (a flag's arguments, a key's scalar or list): nil when the
    /// value says "nothing" (an empty report path). Throws the mistake without its place.
    public func read(_ written: [String]) throws(SettingValueError) -> Value? {
        try form.read(written)
    }

    /// `--flag: expected …, found …`, the words a flag's mistake is told in.
    public func flagMessage(_ error: SettingValueError) -> String {
        "--\(flag): " + error.message(expected: form.expected)
    }

    /// Checks a value already in a configuration, as if it had been written.
    func check(_ value: Value) throws(SettingValueError) {
        _ = try form.read(form.written(value))
    }
}

/// A value that is not what its setting takes: which of the written values (for a list)
/// and what was found, or a reason of its own.
public struct SettingValueError: Error, Sendable, Equatable {
    /// The index of the written value at fault.
    public var index: Int
    /// What was found, as the message shows it (`"three"`, `101, outside 1…100`).
    public var found: String
    /// A reason that replaces "expected …, found …".
    public var reason: String?

    public init(index: Int = 0, found: String, reason: String? = nil) {
        self.index = index
        self.found = found
        self.reason = reason
    }

    /// A value that reads but is out of its range: the range said both ways, as the
    /// words a person looks for ("between 1 and 100") and as an interval.
    init<Bound>(outOf range: ClosedRange<Bound>, expected: String, found: String) {
        self.init(found: "\(found), outside \(range.lowerBound)…\(range.upperBound)",
                  reason: "expected \(expected) between \(range.lowerBound) and \(range.upperBound), found \(found), outside \(range.lowerBound)…\(range.upperBound)")
    }

    public func message(expected: String) -> String {
        reason ?? "expected \(expected), found \(found)"
    }
}

/// How a setting's value is written and read: the same for a flag's arguments and a
/// pipeline key's scalar or list.
public struct SettingForm<Value: Sendable>: Sendable {
    /// What the value must be, as the error messages say it.
    public let expected: String
    /// Whether the value is a list (a repeated flag; a YAML list or one scalar).
    public let isList: Bool
    /// The choices, for completion, when the value is one of a few words.
    public let choices: [String]?
    /// A value the form takes and one it refuses (for the table's round-trip test).
    public let examples: (valid: String, invalid: String?)
    let parse: @Sendable ([String]) throws(SettingValueError) -> Value?
    let write: @Sendable (Value) -> [String]

    func read(_ written: [String]) throws(SettingValueError) -> Value? { try parse(written) }
    public func written(_ value: Value) -> [String] { write(value) }
}

extension SettingForm {
    /// One value from one scalar; `one` returns nil for text it cannot read.
    static func single(expected: String, choices: [String]? = nil, examples: (String, String?),
                       read one: @escaping @Sendable (String) throws(SettingValueError) -> Value?,
                       write: @escaping @Sendable (Value) -> String) -> SettingForm {
        SettingForm(expected: expected, isList: false, choices: choices, examples: examples,
                    parse: { (written: [String]) throws(SettingValueError) -> Value? in
                        guard written.count == 1 else {
                            throw SettingValueError(index: 0, found: written.isEmpty ? "nothing" : "a list")
                        }
                        guard let value = try one(written[0]) else {
                            throw SettingValueError(index: 0, found: "\"\(written[0])\"")
                        }
                        return value
                    },
                    write: { [write($0)] })
    }

    static func quoted(_ text: String) -> String { "\"\(text)\"" }
}

extension SettingForm where Value == Int {
    static func integer(_ range: ClosedRange<Int>) -> SettingForm {
        .single(expected: "an integer",
                examples: ("\(range.lowerBound)", "\(range.upperBound + 1)"),
                read: { (text: String) throws(SettingValueError) -> Int? in
                    guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { return nil }
                    guard range.contains(value) else {
                        throw SettingValueError(outOf: range, expected: "an integer", found: "\(value)")
                    }
                    return value
                },
                write: { "\($0)" })
    }
}

extension SettingForm where Value == Double {
    /// A number in `range`, of `unit` (hours, seconds) when it has one.
    static func number(_ range: ClosedRange<Double>, of unit: String? = nil) -> SettingForm {
        let what = unit.map { "a number of \($0)" } ?? "a number"
        return .single(expected: what,
                       examples: (SettingForm.shown(range.upperBound), "\(range.upperBound * 2 + 1)"),
                       read: { (text: String) throws(SettingValueError) -> Double? in
                           guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else { return nil }
                           guard range.contains(value) else {
                               throw SettingValueError(outOf: range, expected: what, found: "\(value)")
                           }
                           return value
                       },
                       write: { SettingForm.shown($0) })
    }

    /// 168 rather than 168.0, 0.8 as it is.
    static func shown(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
    }
}

extension SettingForm where Value == Int64 {
    /// A byte count as people write them (`100MB`, `64MiB`), at least `minimum`.
    static func size(like example: String, atLeast minimum: Int64 = 1) -> SettingForm {
        .single(expected: "a size like \(example)", examples: (example, "lots"),
                read: { (text: String) throws(SettingValueError) -> Int64? in
                    guard let value = ByteSize.parse(text), value > 0 else { return nil }
                    guard value >= minimum else {
                        throw SettingValueError(found: "\(text), less than \(SettingForm.compact(minimum))")
                    }
                    return value
                },
                write: { SettingForm.compact($0) })
    }

    /// `100MB`, `28MB`, `1KB`: as a flag is written.
    static func compact(_ bytes: Int64) -> String {
        for (unit, factor) in [("GB", Int64(1_000_000_000)), ("MB", 1_000_000), ("KB", 1_000)] where bytes % factor == 0 {
            return "\(bytes / factor)\(unit)"
        }
        return "\(bytes)"
    }
}

extension SettingForm where Value == Bool {
    static var boolean: SettingForm {
        .single(expected: "true or false", examples: ("true", "maybe"),
                read: { (text: String) throws(SettingValueError) -> Bool? in
                    switch text.trimmingCharacters(in: .whitespaces).lowercased() {
                    case "true", "yes", "on": return true
                    case "false", "no", "off": return false
                    default: return nil
                    }
                },
                write: { "\($0)" })
    }
}

extension SettingForm where Value == String {
    /// Any text that is not empty; `expected` says what it is (a path, a host).
    static func text(_ expected: String) -> SettingForm {
        .single(expected: expected, examples: ("some-thing", ""),
                read: { (text: String) throws(SettingValueError) -> String? in
                    guard !text.isEmpty else { throw SettingValueError(found: "an empty value") }
                    return text
                },
                write: { $0 })
    }

    /// A path that may be left empty to mean "none" (`${AVATAR_CACHE_METRICS:-}`: no
    /// metrics file unless the environment names one).
    static func pathOrNothing(_ expected: String) -> SettingForm {
        SettingForm(expected: expected, isList: false, choices: nil, examples: ("out.file", nil),
                    parse: { (written: [String]) throws(SettingValueError) -> String? in
                        guard written.count == 1 else { throw SettingValueError(found: written.isEmpty ? "nothing" : "a list") }
                        return written[0].isEmpty ? nil : written[0]
                    },
                    write: { [$0] })
    }
}

extension SettingForm where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of an enumeration's raw values, in any case.
    static var choice: SettingForm {
        let names = Value.allCases.map(\.rawValue)
        return .single(expected: "one of " + names.joined(separator: ", "), choices: names, examples: (names[0], "none-of-these"),
                       read: { Value(rawValue: $0.trimmingCharacters(in: .whitespaces).lowercased()) },
                       write: { $0.rawValue })
    }
}

extension SettingForm {
    /// Several values of one form (a YAML list or one scalar; a flag given several
    /// times). `expected` names the list (`a list of scales`).
    static func list<Element>(of element: SettingForm<Element>, expected: String, allowsEmpty: Bool = false) -> SettingForm
    where Value == [Element] {
        SettingForm(expected: expected, isList: true, choices: element.choices,
                    examples: (element.examples.valid, element.examples.invalid),
                    parse: { (written: [String]) throws(SettingValueError) -> [Element]? in
                        guard allowsEmpty || !written.isEmpty else { throw SettingValueError(found: "an empty list") }
                        var values: [Element] = []
                        for (index, text) in written.enumerated() {
                            do throws(SettingValueError) {
                                guard let value = try element.read([text]) else { continue }
                                values.append(value)
                            } catch {
                                throw SettingValueError(index: index, found: error.found, reason: error.reason)
                            }
                        }
                        return values
                    },
                    write: { $0.flatMap(element.written) })
    }
}

extension SettingForm where Value == FieldMap {
    /// `KEY=PATH` entries (a repeated flag; a pipeline file's `map:` block or list).
    static var fieldMap: SettingForm {
        SettingForm(expected: "a list of KEY=PATH", isList: true, choices: nil,
                    examples: ("photo=avatarUrl", "colour-of-hair=hair"),
                    parse: { (written: [String]) throws(SettingValueError) -> FieldMap? in
                        var map = FieldMap()
                        for (index, entry) in written.enumerated() {
                            do {
                                try map.add(entry)
                            } catch {
                                throw SettingValueError(index: index, found: "\"\(entry)\"", reason: "\(error)")
                            }
                        }
                        return map
                    },
                    write: { $0.written })
    }
}

extension SettingForm where Value == Shard {
    static var shard: SettingForm {
        .single(expected: "i/n, the i-th of n shards from 0 (0/3)", examples: ("1/3", "3/3"),
                read: { (text: String) throws(SettingValueError) -> Shard? in
                    do { return try Shard(parsing: text) } catch let error as ConfigurationError {
                        throw SettingValueError(found: "\"\(text)\"", reason: error.message.replacingOccurrences(of: "--shard ", with: ""))
                    } catch {
                        return nil
                    }
                },
                write: { $0.description })
    }
}

/// Where a setting's value goes in a `WarmConfiguration`, and how it is read back for
/// validation: a key path, with a conversion where the units differ (hours → seconds).
struct ConfigurationBinding<Value: Sendable>: Sendable {
    let get: @Sendable (WarmConfiguration) -> Value?
    let set: @Sendable (inout WarmConfiguration, Value) -> Void

    static func at(_ path: WritableKeyPath<WarmConfiguration, Value> & Sendable) -> ConfigurationBinding {
        ConfigurationBinding(get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
    }
}

extension ConfigurationBinding where Value == Double {
    /// Hours in the setting, seconds in the configuration.
    static func hours(_ path: WritableKeyPath<WarmConfiguration, TimeInterval> & Sendable) -> ConfigurationBinding {
        ConfigurationBinding(get: { $0[keyPath: path] / 3600 }, set: { $0[keyPath: path] = $1 * 3600 })
    }
}

extension ConfigurationBinding where Value == Int64 {
    /// A byte count the configuration holds as an `Int`.
    static func bytes(_ path: WritableKeyPath<WarmConfiguration, Int> & Sendable) -> ConfigurationBinding {
        ConfigurationBinding(get: { Int64($0[keyPath: path]) }, set: { $0[keyPath: path] = Int(clamping: $1) })
    }
}

extension ConfigurationBinding where Value: Sendable {
    /// A value the configuration holds optionally (a shard, an export format).
    static func optional(_ path: WritableKeyPath<WarmConfiguration, Value?> & Sendable) -> ConfigurationBinding {
        ConfigurationBinding(get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
    }
}

/// A setting whatever its value's type: what the table is walked through.
public protocol AnySetting: Sendable {
    var key: String { get }
    var flag: String { get }
    var otherKeys: [String] { get }
    var valueName: String { get }
    var help: String { get }
    var defaultText: String? { get }
    var expected: String { get }
    var isList: Bool { get }
    var choices: [String]? { get }
    var examples: (valid: String, invalid: String?) { get }
    /// Reads written values into `settings`; nothing is set for a value meaning "none".
    func take(_ written: [String], into settings: inout PipelineSettings) throws(SettingValueError)
    /// The value `settings` holds, as written (nil when it holds none).
    func written(in settings: PipelineSettings) -> [String]?
    /// Sets the value `source` holds, if any, in `settings`.
    func copy(from source: PipelineSettings, into settings: inout PipelineSettings)
    /// Puts the value `settings` holds, if any, into `configuration`.
    func apply(_ settings: PipelineSettings, to configuration: inout WarmConfiguration)
    /// Checks the value `configuration` holds against the setting's range.
    func check(_ configuration: WarmConfiguration) throws(ConfigurationError)
    /// Checks the value `settings` holds, for a setting that lands nowhere in a
    /// configuration (the others are checked there).
    func checkUnbound(_ settings: PipelineSettings) throws(ConfigurationError)
    /// `--flag: expected …, found …`.
    func flagMessage(_ error: SettingValueError) -> String
}

extension Setting: AnySetting {
    public var expected: String { form.expected }
    public var isList: Bool { form.isList }
    public var choices: [String]? { form.choices }
    public var examples: (valid: String, invalid: String?) { form.examples }

    public func take(_ written: [String], into settings: inout PipelineSettings) throws(SettingValueError) {
        if let value = try read(written) { settings[self] = value }
    }

    public func written(in settings: PipelineSettings) -> [String]? {
        settings[self].map(form.written)
    }

    public func copy(from source: PipelineSettings, into settings: inout PipelineSettings) {
        if let value = source[self] { settings[self] = value }
    }

    public func apply(_ settings: PipelineSettings, to configuration: inout WarmConfiguration) {
        if let binding, let value = settings[self] { binding.set(&configuration, value) }
    }

    public func check(_ configuration: WarmConfiguration) throws(ConfigurationError) {
        guard let binding, let value = binding.get(configuration) else { return }
        do { try check(value) } catch { throw ConfigurationError(message: flagMessage(error)) }
    }

    public func checkUnbound(_ settings: PipelineSettings) throws(ConfigurationError) {
        guard binding == nil, let value = settings[self] else { return }
        do { try check(value) } catch { throw ConfigurationError(message: flagMessage(error)) }
    }
}
