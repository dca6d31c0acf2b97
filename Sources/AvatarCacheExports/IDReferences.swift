import AvatarCacheSupport

/// The person's id as the rest of an export knows it: of the document id, an `id` field
/// and a user id field (`uid`, `userId`), the one that other collections' values and map
/// keys (`userId`, `participants`, a directory keyed by id), subcollection paths
/// (`users/{id}/sessions`) and Firebase Auth's `localId`s point at. Judged on the
/// first look's samples (`FieldChooser.sampleSize` documents a collection) and the
/// parents of subcollection documents it counted (at most `maxParents` a group), so the
/// memory is bounded whatever the export's size.
struct IDReferences {
    /// Distinct parent ids kept per subcollection group.
    static let maxParents = 5_000
    /// Values looked at in one document (arrays and maps of ids included).
    static let maxTokensPerDocument = 2_000

    /// Subcollection group (`users/sessions`) → its documents' parent ids → how many.
    var parents: [String: [String: Int]] = [:]

    mutating func noteParent(group: String, parentID: String) {
        if parents[group]?[parentID] != nil || (parents[group]?.count ?? 0) < Self.maxParents {
            parents[group, default: [:]][parentID, default: 0] += 1
        }
    }

    /// An id candidate: nil path for the document id.
    struct Candidate {
        var path: FieldPath?
        var label: String
        var values: Set<String>
        /// Records pointing at it, by where they are ("attendee records of \"sessions\"").
        var hits: [(String, Int)] = []
        var total: Int { hits.reduce(0) { $0 + $1.1 } }
    }

    /// The candidate the references hit most, and the evidence for the note; nil when
    /// nothing points at any of them. `current`: the id the names chose (nil: the
    /// document id), kept unless another candidate is hit strictly more.
    func choose(people group: String, samples: [(id: String, fields: DocumentFields)], current: [FieldPath]?,
                others: [String: [(id: String, fields: DocumentFields)]], authIDs: Set<String>) -> (id: [FieldPath]?, evidence: String)? {
        guard !samples.isEmpty else { return nil }
        var candidates = [Candidate(path: nil, label: "the document id", values: Set(samples.map(\.id).filter { !$0.isEmpty }))]
        for name in ["id"] + FieldChooser.userIDFields {
            var path: String?
            var values = Set<String>()
            var have = 0
            for (_, fields) in samples {
                guard let (found, value) = FieldChooser.resolve(name, in: fields), let text = PeoplePlan.text(value), !text.isEmpty else { continue }
                path = path ?? found
                values.insert(text)
                have += 1
            }
            guard let path, have * 2 >= samples.count, let fieldPath = try? FieldPath(parsing: path),
                  !candidates.contains(where: { $0.path == fieldPath }) else { continue }
            candidates.append(Candidate(path: fieldPath, label: path, values: values))
        }
        if let current, let path = current.first, !candidates.contains(where: { $0.path == path }) {
            let values = Set(samples.compactMap { path.value(in: $0.fields).flatMap(PeoplePlan.text) }.filter { !$0.isEmpty })
            candidates.append(Candidate(path: path, label: path.text, values: values))
        }
        guard candidates.count > 1 else { return nil }

        // Other collections' documents pointing at a candidate's values.
        for (other, documents) in others.sorted(by: { $0.key < $1.key }) where other != group {
            var counts = Array(repeating: 0, count: candidates.count)
            for (_, fields) in documents {
                var tokens = Set<String>()
                Self.collect(.map(fields), into: &tokens, depth: 0, topLevel: true)
                for index in candidates.indices where !tokens.isDisjoint(with: candidates[index].values) { counts[index] += 1 }
            }
            for index in candidates.indices where counts[index] > 0 {
                candidates[index].hits.append(("\(counts[index]) of \(documents.count) sampled \"\(other)\" records", counts[index]))
            }
        }
        // Subcollections of the people's documents name their parent by the document id.
        for (child, ids) in parents.sorted(by: { $0.key < $1.key }) where child.hasPrefix(group + "/") && child.split(separator: "/").count == group.split(separator: "/").count + 1 {
            for index in candidates.indices {
                let count = ids.filter { candidates[index].values.contains($0.key) }.reduce(0) { $0 + $1.value }
                if count > 0 { candidates[index].hits.append(("\(count) \"\(child)\" records under it", count)) }
            }
        }
        if !authIDs.isEmpty {
            for index in candidates.indices {
                let count = candidates[index].values.filter(authIDs.contains).count
                if count > 0 { candidates[index].hits.append(("\(count) Firebase Auth accounts", count)) }
            }
        }
        let currentIndex = candidates.firstIndex { $0.path == current?.first } ?? 0
        guard candidates.contains(where: { $0.total > 0 }) else { return nil }
        var best = currentIndex
        for index in candidates.indices where candidates[index].total > candidates[best].total { best = index }
        let chosen = candidates[best]
        var evidence = chosen.hits.isEmpty ? "nothing points at it" : chosen.hits.map(\.0).joined(separator: " and ") + " point at it"
        for other in candidates.indices where other != best {
            let candidate = candidates[other]
            // The same values as the chosen one (an `id` field repeating the document id) say nothing new.
            if candidate.values == chosen.values { continue }
            evidence += "; \(candidate.label) " + (candidate.total == 0 ? "matches none" : "is pointed at by \(candidate.hits.map(\.0).joined(separator: " and "))")
        }
        return (chosen.path.map { [$0] }, evidence)
    }

    /// The values a document points with: texts and whole numbers, references' last
    /// component, and the keys of maps below the top level (a map keyed by user id).
    static func collect(_ value: DocumentValue, into tokens: inout Set<String>, depth: Int, topLevel: Bool = false) {
        guard depth < 5, tokens.count < maxTokensPerDocument else { return }
        switch value {
        case .string(let text):
            let trimmed = text.trimmedWhitespace
            if !trimmed.isEmpty, trimmed.count <= 200 {
                tokens.insert(trimmed)
                // A path to a person's document (`users/u1`).
                if trimmed.contains("/"), let last = trimmed.split(separator: "/").last { tokens.insert(String(last)) }
            }
        case .integer(let number):
            tokens.insert(String(number))
        case .reference(let path):
            if let last = path.split(separator: "/").last { tokens.insert(String(last)) }
        case .array(let elements):
            for element in elements { collect(element, into: &tokens, depth: depth + 1) }
        case .map(let fields):
            for (name, inner) in zip(fields.names, fields.values) {
                if !topLevel { tokens.insert(name) }
                collect(inner, into: &tokens, depth: depth + 1)
            }
        default:
            break
        }
    }
}
