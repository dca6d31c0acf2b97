/// Where an app keeps its people and conversations: `--map KEY=PATH` (repeatable) or a
/// pipeline file's `map:` block. A path reaches into maps and arrays
/// (`profile_photo.downloadUrl`, `imagePaths[0]`); a key may list alternatives separated
/// by `|` (`name=displayName|fullName|username`): the first present and not empty wins.
/// `participants` may join fields with `+` (`participants=buyerId+sellerId`: two named
/// roles). `__name__`, Firestore's own name for it, is a document's id (`id=__name__`: the
/// document id, not a field). A key not given is chosen from the documents
/// (`FieldChooser`), NexusAI's names first.
public struct FieldMap: Sendable, Hashable, CustomStringConvertible {
    public enum Key: String, Sendable, CaseIterable {
        case users, id, name
        case givenName = "given-name"
        case familyName = "family-name"
        case photo, color, conversations, participants
        case updatedAt = "updated-at"
        case lastSender = "last-sender"
    }

    public struct Error: Swift.Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    /// Each key's alternatives, in order; each alternative one path or, for
    /// `participants`, several joined by `+`.
    public private(set) var entries: [Key: [[FieldPath]]] = [:]
    /// The entries as written, in order (for messages and the report).
    public private(set) var written: [String] = []

    public init() {}

    /// Reads `KEY=PATH[|PATH…]` entries; a key given twice keeps the last.
    public init(parsing entries: [String]) throws {
        for entry in entries { try add(entry) }
    }

    public mutating func add(_ entry: String) throws {
        guard let equals = entry.firstIndex(of: "=") else {
            throw Error(description: "\"\(entry)\": expected KEY=PATH (keys: \(Key.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let name = entry[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        guard let key = Key(rawValue: name) ?? Key.allCases.first(where: { $0.rawValue.replacingOccurrences(of: "-", with: "") == name.replacingOccurrences(of: "_", with: "") }) else {
            throw Error(description: "\"\(entry)\": unknown key \"\(name)\" (keys: \(Key.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let value = entry[entry.index(after: equals)...]
        var alternatives: [[FieldPath]] = []
        for alternative in value.split(separator: "|", omittingEmptySubsequences: false) {
            let parts = alternative.split(separator: "+", omittingEmptySubsequences: false)
            if parts.count > 1 && key != .participants {
                throw Error(description: "\"\(entry)\": only participants joins fields with +")
            }
            alternatives.append(try parts.map { part in
                do {
                    return try FieldPath(parsing: part.trimmingCharacters(in: .whitespaces))
                } catch let error as FieldPath.Error {
                    throw Error(description: "\"\(entry)\": \(error.description)")
                }
            })
        }
        if (key == .users || key == .conversations), alternatives.contains(where: { $0.contains { $0.components.count != 1 } }) {
            throw Error(description: "\"\(entry)\": \(key.rawValue) names a collection or a top-level key, not a path")
        }
        entries[key] = alternatives
        written.removeAll { $0.hasPrefix(key.rawValue + "=") }
        written.append("\(key.rawValue)=\(value)")
    }

    public subscript(key: Key) -> [[FieldPath]]? { entries[key] }

    /// The names of a collection key's alternatives (`users`, `conversations`).
    func names(_ key: Key) -> [String]? {
        entries[key]?.compactMap { $0.first?.text }
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// Whether a key names the document id (`__name__`), which only a Firestore export's
    /// documents and a Realtime Database's members have.
    var namesDocumentID: Bool { entries.values.contains { $0.contains { $0.contains(where: \.isDocumentName) } } }

    /// The map without its collections (`users`, `conversations`): its fields, for another
    /// part of an export whose people are not in a collection of that name.
    var withoutCollections: FieldMap {
        var map = self
        map.entries[.users] = nil
        map.entries[.conversations] = nil
        map.written.removeAll { $0.hasPrefix("users=") || $0.hasPrefix("conversations=") }
        return map
    }
    public var description: String { written.map { "--map \($0)" }.joined(separator: " ") }
}

/// A path into a document: keys of maps and indexes of arrays
/// (`profile_photo.downloadUrl`, `imagePaths[0]`, `a.b[2].c`); a key holding a dot or a
/// bracket in backticks, as Firestore writes such a field path (`` `profile.photo`.url ``).
/// `__name__` alone is the document's id.
public struct FieldPath: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Equatable, Hashable {
        case key(String)
        case index(Int)
    }

    public struct Error: Swift.Error, CustomStringConvertible {
        public var description: String
    }

    public let components: [Component]
    public let text: String

    /// Firestore's name for a document's id in a field path (`__name__`).
    public static let documentName = "__name__"

    /// The document's id, not a field (`__name__`).
    public var isDocumentName: Bool { components == [.key(Self.documentName)] }

    /// The path of one key at the top of a document (`id`).
    public init(key: String) {
        components = [.key(key)]
        text = key
    }

    public init(parsing text: String) throws {
        guard !text.isEmpty else { throw Error(description: "an empty path") }
        var components: [Component] = []
        var key = ""
        var characters = text[...]
        func endKey() throws {
            guard !key.isEmpty else { throw Error(description: "path \"\(text)\" has an empty name") }
            components.append(.key(key))
            key = ""
        }
        while let character = characters.first {
            characters = characters.dropFirst()
            switch character {
            case "`":
                guard key.isEmpty, let close = characters.firstIndex(of: "`") else {
                    throw Error(description: "path \"\(text)\": a backtick opens a quoted name that must close before a . or [")
                }
                key = String(characters[..<close])
                characters = characters[characters.index(after: close)...]
                try endKey()
                if let next = characters.first, next != ".", next != "[" {
                    throw Error(description: "path \"\(text)\": expected . or [ after a quoted name")
                }
                if characters.first == "." {
                    characters = characters.dropFirst()
                    if characters.isEmpty { throw Error(description: "path \"\(text)\" ends with a dot") }
                }
            case ".":
                if key.isEmpty, case .index = components.last { continue }
                try endKey()
            case "[":
                if !key.isEmpty { try endKey() }
                guard let close = characters.firstIndex(of: "]"), let index = Int(characters[..<close]), index >= 0 else {
                    throw Error(description: "path \"\(text)\": expected [N] with N a whole number from 0")
                }
                components.append(.index(index))
                characters = characters[characters.index(after: close)...]
            default:
                key.append(character)
            }
        }
        if !key.isEmpty { components.append(.key(key)) }
        if case .index = components.first { throw Error(description: "path \"\(text)\" starts with an index") }
        guard !components.isEmpty else { throw Error(description: "an empty path") }
        self.components = components
        self.text = text
    }

    public var description: String { text }

    /// The first name (a top-level field).
    var head: String {
        if case .key(let name) = components[0] { return name }
        return ""
    }

    /// The value at this path in `fields`; nil when any step is missing.
    func value(in fields: DocumentFields) -> DocumentValue? {
        var current: DocumentValue = .map(fields)
        for component in components {
            switch (component, current) {
            case (.key(let name), .map(let map)):
                guard let next = map[name] else { return nil }
                current = next
            case (.index(let index), .array(let elements)):
                guard index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}

import Foundation
