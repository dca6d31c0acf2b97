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

    /// The id candidates of the people's sampled documents: the document id, then an `id`
    /// field and the user id fields on half of them or more, then fields of any name
    /// holding a different system-made id on nearly each, then `current` (the id the
    /// names chose; nil: the document id).
    static func candidates(_ samples: [(id: String, fields: DocumentFields)], current: [FieldPath]?) -> [Candidate] {
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
        // Fields of any name whose values are ids a system made, one per document (an
        // app's own key under a name no list knows).
        var order: [String] = []
        for (_, fields) in samples {
            for name in fields.names where !order.contains(name) && !name.contains(".") && !name.contains("[") { order.append(name) }
        }
        for name in order {
            let texts = samples.compactMap { $0.fields[name].flatMap(PeoplePlan.text) }.filter { !$0.isEmpty }
            guard texts.count * 10 >= samples.count * 9, texts.filter(ValueEvidence.isIdentifier).count * 10 >= texts.count * 9,
                  Set(texts).count == texts.count, !candidates.contains(where: { $0.path == FieldPath(key: name) }) else { continue }
            candidates.append(Candidate(path: FieldPath(key: name), label: name, values: Set(texts)))
        }
        if let current, let path = current.first, !candidates.contains(where: { $0.path == path }) {
            let values = Set(samples.compactMap { path.value(in: $0.fields).flatMap(PeoplePlan.text) }.filter { !$0.isEmpty })
            candidates.append(Candidate(path: path, label: path.text, values: values))
        }
        return candidates
    }

    /// Whether the candidates say different things (an `id` field repeating the document
    /// id does not): only then is the choice worth a pass over the other documents.
    static func disagree(_ candidates: [Candidate]) -> Bool {
        Set(candidates.map(\.values)).count > 1
    }

    /// Documents of other collections looked at in the pass for the references, at most.
    static let maxDocumentsLookedAt = 200_000

    /// Counts, per collection group, the documents pointing at each candidate: by a
    /// value, a map key below the top level, or their own id (a `settings/{uid}` kept per
    /// person, a subcollection of participants keyed by user id).
    struct Counter {
        var candidates: [Candidate]
        var counts: [String: [Int]] = [:]
        var documents: [String: Int] = [:]
        var order: [String] = []

        mutating func add(group: String, id: String, fields: DocumentFields) {
            var tokens: Set<String> = id.isEmpty ? [] : [id]
            IDReferences.collect(.map(fields), into: &tokens, depth: 0, topLevel: true)
            if counts[group] == nil {
                counts[group] = Array(repeating: 0, count: candidates.count)
                order.append(group)
            }
            documents[group, default: 0] += 1
            for index in candidates.indices where !tokens.isDisjoint(with: candidates[index].values) { counts[group]![index] += 1 }
        }

        /// The counts as the candidates' hits ("120 of 300 \"sessions\" records").
        func hits(sampled: Bool) -> [Candidate] {
            var result = candidates
            for group in order.sorted() {
                for index in result.indices where counts[group]![index] > 0 {
                    result[index].hits.append(("\(counts[group]![index]) of \(documents[group]!)\(sampled ? " sampled" : "") \"\(group)\" records", counts[group]![index]))
                }
            }
            return result
        }
    }

    /// The candidate the references hit most, and the evidence for the note; nil when
    /// nothing points at any of them. `counted`: the candidates with the other
    /// collections' hits (`Counter`, over the samples or every document); the
    /// subcollections under the people's documents and the Auth accounts are added here.
    /// `current` is kept unless another candidate is hit strictly more.
    func choose(people group: String, counted: [Candidate], current: [FieldPath]?, authIDs: Set<String>) -> (id: [FieldPath]?, evidence: String)? {
        var candidates = counted
        guard !candidates.isEmpty else { return nil }
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
