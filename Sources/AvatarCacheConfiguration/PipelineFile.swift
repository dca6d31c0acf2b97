import AvatarCacheExports
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

    /// Every key a file may use and what its value is: the settings' (`Settings`), under
    /// each spelling, and `inputs`.
    static let keys: [String: String] = Settings.byKey.mapValues(\.expected)
        .merging(["inputs": "a list of paths or {path, format}"]) { own, _ in own }

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

    /// Reads one key's value into `settings`: `inputs` here, every other key through its
    /// setting, from one scalar or a list of them.
    static func read(_ key: String, _ value: Node, _ reader: ValueReader, into settings: inout PipelineSettings) throws {
        if key == "inputs" {
            settings.inputs = try reader.inputs(value)
            return
        }
        guard let setting = Settings.byKey[key] else { return }
        let nodes: [Node]
        let written: [String]
        switch value {
        case .sequence(let sequence) where setting.isList:
            nodes = Array(sequence)
            written = try nodes.map { try reader.scalar($0) }
        case .scalar:
            nodes = [value]
            written = try nodes.map { try reader.scalar($0) }
        case .mapping(let mapping) where setting.key == Settings.map.key:
            // `map:` as a block of KEY: PATH lines.
            nodes = mapping.map(\.value)
            written = try mapping.map { pair in "\(try reader.scalar(pair.key))=\(try reader.scalar(pair.value))" }
        default: throw reader.fail(value)
        }
        do {
            try setting.take(written, into: &settings)
        } catch {
            let node = nodes.indices.contains(error.index) ? nodes[error.index] : value
            throw Error(file: reader.file, line: line(node), key: key, message: error.message(expected: setting.expected))
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

        func enumeration<T: RawRepresentable & CaseIterable>(_ node: Node, _: T.Type) throws -> T where T.RawValue == String {
            guard let value = T(rawValue: try scalar(node).lowercased()) else {
                let choices = T.allCases.map(\.rawValue).joined(separator: ", ")
                throw Error(file: file, line: PipelineFile.line(node), key: key, message: "expected one of \(choices), found \(describe(node))")
            }
            return value
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
