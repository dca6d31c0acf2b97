import Foundation
import Synchronization

/// Where a reader found the people of one part of an export, each role's fields and the
/// evidence for them, and the `--map` line that reads the same people: what `inspect`
/// shows before anything is downloaded. Readers that choose (Firestore exports, JSON
/// records read through a map) hand one to `PeopleChoice.observer` when one is set.
public struct PeopleChoice: Sendable, Codable, Equatable {
    /// One role (`id`, `name`, `given-name`, `family-name`, `photo`, `color`).
    public struct Role: Sendable, Codable, Equatable {
        public var key: String
        /// The paths read, the first present wins; `__name__` is the document id.
        public var paths: [String]
        /// Whether the operator's map gave it.
        public var mapped: Bool
        public var evidence: String?
        /// Candidates passed over, and why.
        public var runnersUp: [String]
    }

    /// The part of the export read (a Firestore export, a Realtime Database file, a JSON file).
    public var source: String
    /// The collection (group) or node the people were read from.
    public var collection: String
    public var collectionEvidence: String?
    public var roles: [Role]
    /// Documents of the collection read, and how many had each role.
    public var documents: Int
    public var counts: [String: Int]
    /// The `--map` entries that read the same people (KEY=PATH each).
    public var map: [String]

    public var mapLine: String { map.map { "--map \(shellQuoted($0))" }.joined(separator: " ") }

    /// Receives the choices made while a reader runs in `PeopleChoice.$observer.withValue`.
    public final class Observer: Sendable {
        private let list = Mutex<[PeopleChoice]>([])

        public init() {}

        public var choices: [PeopleChoice] { list.withLock { $0 } }

        func add(_ choice: PeopleChoice) { list.withLock { $0.append(choice) } }
    }

    @TaskLocal public static var observer: Observer?
}

/// `text` as a shell reads it back: bare when it is plain, else in single quotes.
func shellQuoted(_ text: String) -> String {
    let plain = text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || "-_=./:@,".unicodeScalars.contains($0) }
    return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

extension PeoplePlan {
    /// The choice this plan makes, for `PeopleChoice.observer`. `documentID`: how a map
    /// names the document's id here (`__name__`), nil where a record's own key is read
    /// without one.
    func choice(source: String, collection: String, collectionKey: String?, collectionEvidence: String?, map given: FieldMap,
                documentID: String?, tally: Tally) -> PeopleChoice {
        func texts(_ paths: [FieldPath]) -> [String] { paths.map(\.text) }
        var roles: [PeopleChoice.Role] = []
        func role(_ key: FieldMap.Key, _ paths: [FieldPath]) {
            guard !paths.isEmpty else { return }
            roles.append(.init(key: key.rawValue, paths: texts(paths), mapped: given[key] != nil, evidence: evidence[key], runnersUp: passed[key] ?? []))
        }
        if let id {
            role(.id, id)
        } else {
            roles.append(.init(key: FieldMap.Key.id.rawValue, paths: [documentID ?? "the record's key"], mapped: given[.id] != nil,
                               evidence: evidence[.id], runnersUp: passed[.id] ?? []))
        }
        role(.name, name)
        role(.givenName, givenName)
        role(.familyName, familyName)
        role(.photo, photo)
        role(.color, color)

        // The entries that give the same plan when read back through `FieldChooser.plan`.
        var map: [String] = []
        if let collectionKey { map.append("users=\(collectionKey)") }
        if let id { map.append("id=" + texts(id).joined(separator: "|")) } else if let documentID { map.append("id=\(documentID)") }
        let bareJoin = joinsBareName && !familyName.isEmpty && name.first.map(Self.isBareName) == true && givenName.isEmpty
        if givenAndFamilyFirst || bareJoin {
            // Given and family names first (the name field only where they are absent, as the
            // chooser finds it again), or a bare name joined with the family name.
            map.append("given-name=" + texts(bareJoin ? [name[0]] : givenName).joined(separator: "|"))
            map.append("family-name=" + texts(familyName).joined(separator: "|"))
        } else if !name.isEmpty {
            map.append("name=" + texts(name).joined(separator: "|"))
            if !givenName.isEmpty { map.append("given-name=" + texts(givenName).joined(separator: "|")) }
            if !familyName.isEmpty { map.append("family-name=" + texts(familyName).joined(separator: "|")) }
        } else {
            if !givenName.isEmpty { map.append("given-name=" + texts(givenName).joined(separator: "|")) }
            if !familyName.isEmpty { map.append("family-name=" + texts(familyName).joined(separator: "|")) }
        }
        if !photo.isEmpty { map.append("photo=" + texts(photo).joined(separator: "|")) }
        if !color.isEmpty { map.append("color=" + texts(color).joined(separator: "|")) }
        return PeopleChoice(source: source, collection: collection, collectionEvidence: collectionEvidence, roles: roles,
                            documents: tally.documents, counts: tally.counts, map: map)
    }
}
