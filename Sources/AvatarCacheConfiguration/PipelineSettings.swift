import AvatarCacheExports
import AvatarCacheFetching
import AvatarCacheModel
import AvatarCacheSupport
import Foundation
import Glibc
import Logging

/// Every setting of a run, each optional: what a pipeline file says, what CLI flags
/// say, merged (flags win) and turned into a `WarmConfiguration`. Key names are the CLI
/// flag names, so `budget: 50MB` in a file and `--budget 50MB` mean the same: both are
/// written values of one setting (`Settings`), applied onto one configuration.
public struct PipelineSettings: Sendable, Equatable {
    /// The inputs, each a path or glob with its format.
    public var inputs: [PipelineInput] = []

    /// Each setting's value, by its key: a setting needs no property of its own, its
    /// declaration (`Settings`) reads, checks and applies it. Nil when nothing was said.
    private var values: [String: Held] = [:]

    /// The value `setting` has here, if it has one.
    public subscript<Value>(_ setting: Setting<Value>) -> Value? {
        get { values[setting.key]?.value as? Value }
        set { values[setting.key] = newValue.map { Held(value: $0) } }
    }

    /// The keys of the settings that have a value here.
    public var keys: Set<String> { Set(values.keys) }

    /// A value of any setting's type.
    private struct Held: Sendable, Equatable {
        let value: any Hashable & Sendable
        static func == (a: Held, b: Held) -> Bool { AnyHashable(a.value) == AnyHashable(b.value) }
    }

    public init() {}

    /// `self` with every value `overrides` sets replacing this one's.
    public func overridden(by overrides: PipelineSettings) -> PipelineSettings {
        var merged = self
        for setting in Settings.all { setting.copy(from: overrides, into: &merged) }
        if !overrides.inputs.isEmpty { merged.inputs = overrides.inputs }
        return merged
    }

    /// Relative paths of a pipeline file taken from its folder, not from wherever the
    /// command runs (cron's is a home directory): cache, inputs, report, metrics file,
    /// token file. Values from the environment (`${NAME}`) count as written in the file.
    mutating func resolvePaths(against folder: URL) {
        func resolved(_ path: String?) -> String? {
            guard let path, !path.isEmpty, !path.hasPrefix("/") else { return path }
            return URL(fileURLWithPath: path, relativeTo: folder).standardizedFileURL.path
        }
        inputs = inputs.map { PipelineInput(path: resolved($0.path) ?? $0.path, format: $0.format) }
        for path in [Settings.cache, Settings.report, Settings.metricsFile, Settings.monicaTokenFile, Settings.caFile] {
            self[path] = resolved(self[path])
        }
    }

    /// The run's configuration: defaults where nothing was said. Inputs' globs are
    /// expanded; the Monica token is read from its file or environment variable.
    public func configuration(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> WarmConfiguration {
        guard let cache = self[Settings.cache], !cache.isEmpty else { throw ConfigurationError(message: "no cache directory: give --cache or the pipeline key \"cache\"") }
        var exports: [String] = []
        var formats: [String: ExportFormat] = [:]
        for input in inputs {
            for path in try input.expanded() {
                exports.append(path)
                if let chosen = input.format ?? self[Settings.format], formats[path] == nil { formats[path] = chosen }
            }
        }
        guard !exports.isEmpty else { throw ConfigurationError(message: "no export given") }
        var configuration = WarmConfiguration(exports: exports, cacheDirectory: URL(fileURLWithPath: cache))
        configuration.exportFormats = formats
        for setting in Settings.all {
            // A value set in code, not read, is checked as one read would be: here when it
            // lands nowhere in the configuration, else by `validate()` below.
            try setting.checkUnbound(self)
            setting.apply(self, to: &configuration)
        }
        configuration.monica = try monicaCredential(environment: environment)
        if let caFile = configuration.caFile {
            // Checked before the run: a wrong path fails now, not as every photo's TLS error.
            guard let data = FileManager.default.contents(atPath: caFile) else {
                throw ConfigurationError(message: "ca-file \(caFile): cannot read the file")
            }
            guard String(decoding: data, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                throw ConfigurationError(message: "ca-file \(caFile): no PEM certificate in it (-----BEGIN CERTIFICATE-----)")
            }
        }
        try configuration.validate()
        return configuration
    }

    /// The token from `monica-token-file`, else the environment variable named by
    /// `monica-token-env` (default `AVATAR_CACHE_MONICA_TOKEN`); never a literal value.
    func monicaCredential(environment: [String: String]) throws -> MonicaCredential? {
        var token: String?
        if let monicaTokenFile = self[Settings.monicaTokenFile] {
            guard let data = FileManager.default.contents(atPath: monicaTokenFile) else {
                throw ConfigurationError(message: "monica-token-file \(monicaTokenFile): cannot read the file")
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if token?.isEmpty ?? true { throw ConfigurationError(message: "monica-token-file \(monicaTokenFile) is empty") }
        } else if let value = environment[self[Settings.monicaTokenEnv] ?? Settings.monicaTokenEnv.defaultValue] {
            token = value.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let token, !token.isEmpty else { return nil }
        guard let host = self[Settings.monicaHost], !host.isEmpty else {
            throw ConfigurationError(message: "a Monica token is set but --monica-host (pipeline key monica-host) is not: the token is only ever sent to that host")
        }
        guard !host.contains("/"), !host.contains("@") else {
            throw ConfigurationError(message: "monica-host takes host or host:port, not a URL")
        }
        return MonicaCredential(host: host, token: token)
    }
}

/// One input of a pipeline: a path or a glob, with its format when it is not detected.
public struct PipelineInput: Sendable, Equatable {
    public var path: String
    public var format: ExportFormat?

    public init(path: String, format: ExportFormat? = nil) {
        self.path = path
        self.format = format
    }

    /// The path itself, or what a glob (`*`, `?`, `[`) matches, sorted.
    public func expanded() throws -> [String] {
        guard path.contains(where: { "*?[".contains($0) }) else { return [path] }
        var result = glob_t()
        defer { globfree(&result) }
        let status = glob(path, 0, nil, &result)
        guard status == 0 else {
            // As a missing export is (65): the input is not there, the command was right.
            throw ExportError(file: path, reason: "the pattern matches no file")
        }
        return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }.sorted()
    }
}

/// Log line format.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

#if canImport(Glibc)
#endif
