import Foundation
import Logging
import Yams

/// Reads `pipelines/*.yml`. Every key is checked before any work: an unknown key, a
/// value of the wrong type or out of range fails with the file, the line, the key and
/// what was expected. `${NAME}` and `${NAME:-default}` in values are replaced from the
/// environment.
public enum PipelineFile {
    public struct Error: Swift.Error, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var key: String?
        public var message: String

        public var description: String {
            "\(file):\(line): " + (key.map { "key \"\($0)\": " } ?? "") + message
        }
    }

    /// Every mistake found in one file, each with its line and key.
    public struct Errors: Swift.Error, CustomStringConvertible {
        public var errors: [Error]

        public var description: String {
            errors.count == 1 ? errors[0].description
                : "\(errors.count) mistakes in \(errors[0].file):\n" + errors.map { "  \($0)" }.joined(separator: "\n")
        }
    }

    public static func load(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PipelineSettings {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Error(file: path, line: 0, key: nil, message: "cannot read the file")
        }
        var settings = try parse(String(decoding: data, as: UTF8.self), file: path, environment: environment)
        settings.resolvePaths(against: URL(fileURLWithPath: path).deletingLastPathComponent())
        return settings
    }

    static let keys: [String: String] = [
        "cache": "a directory path", "inputs": "a list of paths or {path, format}", "format": "an export format", "shard": "i/n, the i-th of n shards from 0 (0/3)",
        "sizes": "a list of point sizes", "size": "a point size or a list of them", "scales": "a list of scales",
        "scale": "a scale or a list of them", "crop": "centre or attention",
        "output-format": "jpeg, png or webp", "monogram-format": "jpeg, png or webp", "quality": "an integer 1–100",
        "budget": "a size like 100MB", "trim-ratio": "a number in (0, 1]", "ttl-hours": "a number of hours",
        "max-ttl-hours": "a number of hours", "failure-ttl-hours": "a number of hours", "concurrency": "an integer",
        "decode-threads": "an integer", "max-connections-per-host": "an integer", "max-bytes": "a size like 20MB",
        "max-pixels": "an integer", "max-decode-memory": "a size like 100MB", "max-record-bytes": "a size like 28MB", "timeout": "seconds", "connect-timeout": "seconds", "max-redirects": "an integer",
        "retries": "an integer", "max-retry-wait": "seconds", "source-deadline": "seconds", "allow-private-networks": "true or false",
        "allow-hosts": "a list of host or host:port", "allow-host": "host or host:port, or a list of them",
        "monica-host": "host or host:port", "monica-token-file": "a path", "monica-token-env": "an environment variable name",
        "wait": "seconds", "report": "a path (empty: none)", "metrics-file": "a path (empty: none)", "log-format": "text or json", "log-level": "trace, debug, info, notice, warning, error or critical",
        "max-failure-rate": "a number between 0 and 1",
    ]

    static func parse(_ text: String, file: String, environment: [String: String]) throws -> PipelineSettings {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw Error(file: file, line: 1, key: nil, message: "the file is empty")
            }
            root = node
        } catch let error as Error {
            throw error
        } catch let error as YamlError {
            throw Error(file: file, line: yamlLine(error), key: nil, message: "not valid YAML: \(error)")
        }
        guard let mapping = root.mapping else {
            throw Error(file: file, line: line(root), key: nil, message: "expected a mapping of keys to values at the top")
        }
        var settings = PipelineSettings()
        // Every mistake is reported, not only the first.
        var errors: [Error] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else {
                errors.append(Error(file: file, line: line(keyNode), key: nil, message: "keys must be text"))
                continue
            }
            guard let expected = keys[key] else {
                let suggestion = nearestKey(to: key).map { "did you mean \"\($0)\"? " } ?? ""
                let known = keys.keys.sorted().joined(separator: ", ")
                errors.append(Error(file: file, line: line(keyNode), key: key, message: "unknown key; \(suggestion)(known keys: \(known))"))
                continue
            }
            let reader = ValueReader(file: file, key: key, expected: expected, environment: environment)
            do {
                try read(key, value, reader, into: &settings)
            } catch let error as Error {
                errors.append(error)
            }
        }
        if !errors.isEmpty { throw Errors(errors: errors) }
        return settings
    }

    /// The known key nearest to a mistyped one (at most two edits, or a key it contains).
    static func nearestKey(to key: String) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var previous = Array(0...b.count)
            for (i, x) in a.enumerated() {
                var current = [i + 1]
                for (j, y) in b.enumerated() {
                    current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
                }
                previous = current
            }
            return previous[b.count]
        }
        let typed = Array(key.lowercased().replacingOccurrences(of: "_", with: "-"))
        let ranked = keys.keys.map { ($0, distance(typed, Array($0))) }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
        guard let best = ranked.first else { return nil }
        return best.1 <= max(2, typed.count / 4) ? best.0 : nil
    }

    /// Reads one key's value into `settings`.
    static func read(_ key: String, _ value: Node, _ reader: ValueReader, into settings: inout PipelineSettings) throws {
        switch key {
        case "cache": settings.cache = try reader.string(value)
        case "inputs": settings.inputs = try reader.inputs(value)
        case "format": settings.format = try reader.enumeration(value, ExportFormat.self)
        case "shard": settings.shard = try reader.shard(value)
        case "sizes", "size": settings.sizes = try reader.oneOrMoreIntegers(value, in: 1...2000)
        case "scales", "scale": settings.scales = try reader.oneOrMoreIntegers(value, in: 1...8)
        case "crop": settings.crop = try reader.enumeration(value, CropMode.self)
        case "output-format": settings.outputFormat = try reader.enumeration(value, OutputFormat.self)
        case "monogram-format": settings.monogramFormat = try reader.enumeration(value, OutputFormat.self)
        case "quality": settings.quality = try reader.integer(value, in: 1...100)
        case "budget": settings.budget = try reader.size(value)
        case "trim-ratio": settings.trimRatio = try reader.number(value, in: Pruner.trimRatioRange)
        case "ttl-hours": settings.ttlHours = try reader.number(value, in: 0...100_000)
        case "max-ttl-hours": settings.maxTTLHours = try reader.number(value, in: 0...100_000)
        case "failure-ttl-hours": settings.failureTTLHours = try reader.number(value, in: 0...100_000)
        case "concurrency": settings.concurrency = try reader.integer(value, in: 1...1024)
        case "decode-threads": settings.decodeThreads = try reader.integer(value, in: 1...256)
        case "max-connections-per-host": settings.maxConnectionsPerHost = try reader.integer(value, in: 1...1024)
        case "max-bytes": settings.maxBytes = try reader.size(value)
        case "max-pixels": settings.maxPixels = try reader.integer(value, in: 1...1_000_000_000)
        case "max-decode-memory": settings.maxDecodeMemory = try reader.size(value)
        case "max-record-bytes": settings.maxRecordBytes = try reader.size(value)
        case "timeout": settings.timeout = try reader.number(value, in: 0.001...86_400)
        case "connect-timeout": settings.connectTimeout = try reader.number(value, in: 0.001...86_400)
        case "max-redirects": settings.maxRedirects = try reader.integer(value, in: 0...50)
        case "retries": settings.retries = try reader.integer(value, in: 0...10)
        case "max-retry-wait": settings.maxRetryWait = try reader.number(value, in: 0...3600)
        case "source-deadline": settings.sourceDeadline = try reader.number(value, in: 0.001...86_400)
        case "allow-private-networks": settings.allowPrivateNetworks = try reader.boolean(value)
        case "allow-hosts", "allow-host": settings.allowHosts = try reader.oneOrMoreStrings(value)
        case "monica-host": settings.monicaHost = try reader.string(value)
        case "monica-token-file": settings.monicaTokenFile = try reader.string(value)
        case "monica-token-env": settings.monicaTokenEnv = try reader.string(value)
        case "wait": settings.wait = try reader.number(value, in: 0...86_400)
        case "report": settings.report = try reader.optionalString(value)
        case "metrics-file": settings.metricsFile = try reader.optionalString(value)
        case "log-format": settings.logFormat = try reader.enumeration(value, LogFormat.self)
        case "log-level": settings.logLevel = try reader.enumeration(value, Logger.Level.self)
        case "max-failure-rate": settings.maxFailureRate = try reader.number(value, in: 0...1)
        default: break
        }
    }

    static func line(_ node: Node) -> Int { node.mark?.line ?? 0 }

    static func yamlLine(_ error: YamlError) -> Int {
        let text = "\(error)"
        if let range = text.range(of: #"line (\d+)"#, options: .regularExpression),
           let number = Int(text[range].dropFirst(5)) { return number }
        if let range = text.range(of: #"^\d+:\d+"#, options: .regularExpression),
           let number = Int(text[range].split(separator: ":")[0]) { return number }
        return 0
    }

    /// Reads one key's value as the expected type.
    struct ValueReader {
        let file: String
        let key: String
        let expected: String
        let environment: [String: String]

        func fail(_ node: Node, _ found: String? = nil) -> Error {
            let shown = found ?? describe(node)
            return Error(file: file, line: PipelineFile.line(node), key: key, message: "expected \(expected), found \(shown)")
        }

        func describe(_ node: Node) -> String {
            switch node {
            case .scalar(let scalar): return "\"\(expand(scalar.string))\""
            case .mapping: return "a mapping"
            case .sequence: return "a list"
            case .alias: return "an alias"
            }
        }

        func scalar(_ node: Node) throws -> String {
            guard case .scalar(let scalar) = node else { throw fail(node) }
            return expand(scalar.string)
        }

        /// `${NAME}` and `${NAME:-default}` from the environment.
        func expand(_ text: String) -> String {
            guard text.contains("${") else { return text }
            var result = ""
            var rest = Substring(text)
            while let start = rest.range(of: "${"), let end = rest[start.upperBound...].firstIndex(of: "}") {
                result += rest[..<start.lowerBound]
                let inner = rest[start.upperBound..<end]
                let parts = inner.components(separatedBy: ":-")
                let name = parts[0]
                let fallback = parts.count > 1 ? parts[1...].joined(separator: ":-") : ""
                let value = environment[name].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
                result += value
                rest = rest[rest.index(after: end)...]
            }
            return result + rest
        }

        func string(_ node: Node) throws -> String {
            let text = try scalar(node)
            guard !text.isEmpty else { throw fail(node, "an empty value") }
            return text
        }

        /// A value that may be left empty to mean "none" (`${AVATAR_CACHE_METRICS:-}`: no
        /// metrics file unless the environment names one).
        func optionalString(_ node: Node) throws -> String? {
            let text = try scalar(node)
            return text.isEmpty ? nil : text
        }

        func integer(_ node: Node, in range: ClosedRange<Int>) throws -> Int {
            guard let value = Int(try scalar(node)) else { throw fail(node) }
            guard range.contains(value) else { throw fail(node, "\(value), outside \(range.lowerBound)…\(range.upperBound)") }
            return value
        }

        func number(_ node: Node, in range: ClosedRange<Double>) throws -> Double {
            guard let value = Double(try scalar(node)), value.isFinite else { throw fail(node) }
            guard range.contains(value) else { throw fail(node, "\(value), outside \(range.lowerBound)…\(range.upperBound)") }
            return value
        }

        func boolean(_ node: Node) throws -> Bool {
            switch try scalar(node).lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: throw fail(node)
            }
        }

        func shard(_ node: Node) throws -> Shard {
            do { return try Shard(parsing: try scalar(node)) } catch let error as ConfigurationError {
                throw Error(file: file, line: PipelineFile.line(node), key: key, message: error.message.replacingOccurrences(of: "--shard ", with: ""))
            }
        }

        func size(_ node: Node) throws -> Int64 {
            guard let value = ByteSize.parse(try scalar(node)), value > 0 else { throw fail(node) }
            return value
        }

        func enumeration<T: RawRepresentable & CaseIterable>(_ node: Node, _: T.Type) throws -> T where T.RawValue == String {
            guard let value = T(rawValue: try scalar(node).lowercased()) else {
                let choices = T.allCases.map(\.rawValue).joined(separator: ", ")
                throw Error(file: file, line: PipelineFile.line(node), key: key, message: "expected one of \(choices), found \(describe(node))")
            }
            return value
        }

        func strings(_ node: Node) throws -> [String] {
            guard case .sequence(let sequence) = node else { throw fail(node) }
            return try sequence.map { try string($0) }
        }

        /// One value or a list of them (`size: 110` and `sizes: [110, 300]` alike).
        func oneOrMoreIntegers(_ node: Node, in range: ClosedRange<Int>) throws -> [Int] {
            if case .scalar = node { return [try integer(node, in: range)] }
            return try integers(node, in: range)
        }

        func oneOrMoreStrings(_ node: Node) throws -> [String] {
            if case .scalar = node { return [try string(node)] }
            return try strings(node)
        }

        func integers(_ node: Node, in range: ClosedRange<Int>) throws -> [Int] {
            guard case .sequence(let sequence) = node, !sequence.isEmpty else { throw fail(node) }
            return try sequence.map { try integer($0, in: range) }
        }

        func inputs(_ node: Node) throws -> [PipelineInput] {
            guard case .sequence(let sequence) = node, !sequence.isEmpty else { throw fail(node) }
            return try sequence.map { item in
                if case .scalar = item { return PipelineInput(path: try string(item)) }
                guard let mapping = item.mapping else { throw fail(item) }
                var input = PipelineInput(path: "")
                for (keyNode, value) in mapping {
                    switch keyNode.string {
                    case "path": input.path = try string(value)
                    case "format": input.format = try enumeration(value, ExportFormat.self)
                    default:
                        throw Error(file: file, line: PipelineFile.line(keyNode), key: "inputs.\(keyNode.string ?? "?")", message: "unknown key (an input has path and format)")
                    }
                }
                guard !input.path.isEmpty else { throw Error(file: file, line: PipelineFile.line(item), key: "inputs", message: "an input without a path") }
                return input
            }
        }
    }
}
