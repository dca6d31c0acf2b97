import AvatarCacheJSON
import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// Reads people from documents through a field map: a Firestore export (with the Auth
/// export beside it), or a JSON export whose names are not NexusAI's.
///
/// The flow, in passes over the source (each streams it; nothing of it is held but the
/// samples, the conversations' participants and the Auth accounts):
/// ```
/// scan:           count the collections; keep the first documents of each (FieldChooser.sampleSize)
/// choose:         the people's collection and fields, the conversations' (map first)
/// conversations:  who takes part in which, how recently (only when there are conversations)
/// people:         the participants of the most recent conversations first, then everyone else,
///                 then Auth accounts without a document
/// ```
/// A person's document wins; their Auth account fills the name and photo it lacks.
struct MappedPeopleReader {
    /// Where documents come from.
    enum Source {
        case firestore(FirestoreExport)
        case json(path: String, recordsKey: String)
    }

    let path: String
    let source: Source
    let map: FieldMap
    let limits: ReaderLimits
    /// Firebase Auth accounts to merge in (an emulator export's), read once for all its parts.
    var auth = AuthAccounts()
    /// Other parts of the same export are read after this one (an emulator export's
    /// Realtime Database after its Firestore): the Auth accounts without a document are
    /// left to the last part, and no collection of people here is a note, not an error.
    var partsFollow = false
    /// People an earlier part read: their records here are left out (the first kept).
    var skip: Set<String> = []
    /// Photos in Firebase Storage (`FirebaseStorage`), when the export has any or a bucket is named.
    var storage: FirebaseStorage?

    /// A JSON export: its records are one collection, each with its `id` (or its key).
    var readsJSON: Bool {
        if case .json = source { return true }
        return false
    }

    // MARK: Reading the source

    /// Every document of the source. `reportDamage`: damage comes to `damage`; `verify`:
    /// Firestore checksums are checked (a first look at the collections skips them).
    @discardableResult
    private func documents(reportDamage: Bool, verify: Bool = true, _ body: (SourceDocument) throws -> Void, damage: (BadRecord) throws -> Void) throws -> Int {
        switch source {
        case .firestore(let export):
            return try export.forEach(maxRecordBytes: limits.maxRecordBytes, reportDamage: reportDamage, verify: verify, body, damage: damage)
        case .json(let path, let recordsKey):
            let stream: JSONRecordStream
            do {
                stream = try JSONRecordStream(path: path, recordsKey: recordsKey, maxRecordBytes: limits.maxRecordBytes, membersAreRecords: true)
            } catch {
                throw ExportError(file: path, reason: "cannot open: \(error.localizedDescription)")
            }
            var read = 0
            for record in stream {
                let origin = RecordOrigin(file: path, index: record.index, line: record.line)
                switch record.bytes {
                case .failure(let error):
                    if record.index == 1, error.isNotJSON { throw ExportError(file: path, reason: error.description) }
                    if reportDamage { try damage(BadRecord(file: path, index: record.index, line: record.line, reason: error.description)) }
                case .success(let bytes):
                    guard case .map(let fields)? = JSONDocumentValue.value(of: bytes) else {
                        if reportDamage { try damage(BadRecord(file: path, index: record.index, line: record.line, reason: "not a JSON object")) }
                        continue
                    }
                    read += 1
                    try body(SourceDocument(path: [(recordsKey, record.key ?? "")], origin: origin, offset: nil, parsed: fields))
                }
            }
            return read
        }
    }

    /// What a Firestore export states it holds against the documents read (every
    /// collection's), and a bad record for what no other line accounts for.
    private func account(read: Int, _ body: (ExportItem) throws -> Void) throws {
        guard case .firestore(let export) = source, let stated = export.stated else { return }
        let statedBy = export.overallMetadata.count == 1 ? export.overallMetadata[0] : "\(export.overallMetadata.count) overall metadata files"
        if read < stated {
            try body(.bad(BadRecord(file: statedBy, index: 0, line: 0,
                                    reason: "states \(stated) documents; \(read) were read: \(stated - read) lost (the bad records of its files say where)")))
        }
        try body(.count(InputCount(source: path, statedBy: statedBy, unit: "documents", stated: stated, read: read)))
    }

    private struct Stop: Error {}

    /// What the samples of every collection may take together (their records' bytes).
    static let maxSampleBytes = 32 << 20
    /// Damage kept from a JSON export's first records before the look gives up on it.
    static let maxDamagesInFirstLook = 10_000

    // MARK: Choosing

    struct Scan {
        var counts: [String: Int] = [:]
        var order: [String] = []
        var samples: [String: [(id: String, fields: DocumentFields)]] = [:]
        /// The parents subcollection documents name, for the id's evidence.
        var references = IDReferences()
    }

    /// The people's collection: the map's, else the one whose documents look most like
    /// people (`FieldChooser.peopleCollection`), else the common names'; and why, for the note.
    private func usersCollection(_ scan: Scan, authIDs: Set<String>, authEmails: Set<String>) throws -> (name: String, why: String?)? {
        if case .json(_, let key) = source { return scan.counts.isEmpty ? nil : (key, nil) }
        if let names = map.names(.users) {
            if let found = names.lazy.compactMap({ FieldChooser.group(named: $0, in: scan.counts) }).first { return (found, nil) }
            // The map's collection may be a later part's (a Realtime Database node).
            if partsFollow { return nil }
            throw ExportError(file: path, reason: "no collection \(names.map { "\"\($0)\"" }.joined(separator: " or ")) in this export; \(describeCollections(scan))")
        }
        if let (found, why) = FieldChooser.peopleCollection(scan.samples, order: scan.order, counts: scan.counts, authIDs: authIDs, authEmails: authEmails) {
            let others = scan.order.filter { $0 != found }.prefix(4).map { "\"\($0)\"" }
            return (found, "chosen by its documents: \(why)" + (others.isEmpty ? "" : "; others seen: \(others.joined(separator: ", "))"))
        }
        if let found = FieldChooser.collection(FieldChooser.userCollections, in: scan.counts) { return (found, "chosen by its name") }
        return nil
    }

    /// "collections seen: posts (12 documents; first: title, userid, …), …" for messages.
    private func describeCollections(_ scan: Scan) -> String {
        guard !scan.order.isEmpty else { return "it holds no document" }
        let shown = scan.order.prefix(12).map { name -> String in
            let fields = scan.samples[name]?.first?.fields.names.prefix(10).joined(separator: ", ") ?? ""
            return "\"\(name)\" (\(scan.counts[name] ?? 0) documents; fields of the first: \(fields.isEmpty ? "none" : fields))"
        }
        return "collections seen: " + shown.joined(separator: "; ") + (scan.order.count > 12 ? "; and \(scan.order.count - 12) more" : "")
    }

    /// The `--map` line that would read the likeliest collection of people.
    private func suggestion(_ scan: Scan) -> String {
        let ranked = scan.order.map { name -> (String, Int) in
            let samples = scan.samples[name]?.map(\.fields) ?? []
            let score = samples.filter { fields in fields.values.contains { if case .string = $0 { return true } else { return false } } }.count
            return (name, score)
        }.sorted { $0.1 > $1.1 }
        guard let (name, _) = ranked.first else { return "" }
        let samples = scan.samples[name]?.map(\.fields) ?? []
        let first = samples.first
        let text = first?.names.filter { name in if case .string = first?[name] { return true } else { return false } } ?? []
        let photo = text.first { name in
            samples.contains { fields in if case .string(let value) = fields[name] { return value.lowercased().hasPrefix("http") || value.hasPrefix("data:") } else { return false } }
        }
        let nameField = text.first { $0 != photo }
        var line = "--map users=\(name)"
        if let nameField { line += " --map name=\(nameField)" }
        line += " --map photo=\(photo ?? "FIELD")"
        return "; to read people from \"\(name)\": \(line)"
    }

    /// The id candidates of the people's samples with the other collections' documents
    /// pointing at each (`IDReferences`): counted over every document of the others (up
    /// to `IDReferences.maxDocumentsLookedAt`) when the candidates disagree, else over
    /// the samples.
    private func referenceHits(_ scan: Scan, people collection: String, current: [FieldPath]?) throws -> [IDReferences.Candidate] {
        let candidates = IDReferences.candidates(scan.samples[collection] ?? [], current: current)
        var counter = IDReferences.Counter(candidates: candidates)
        guard IDReferences.disagree(candidates) else {
            for group in scan.order where group != collection {
                for (id, fields) in scan.samples[group] ?? [] { counter.add(group: group, id: id, fields: fields) }
            }
            return counter.hits(sampled: true)
        }
        var looked = 0
        do {
            try documents(reportDamage: false, verify: false, { document in
                let group = document.group
                guard group != collection else { return }
                counter.add(group: group, id: document.id, fields: document.fields(wanted: nil).0)
                looked += 1
                if looked >= IDReferences.maxDocumentsLookedAt { throw Stop() }
            }, damage: { _ in })
        } catch is Stop {}
        return counter.hits(sampled: looked >= IDReferences.maxDocumentsLookedAt)
    }

    // MARK: Conversations

    struct Conversation {
        var origin: RecordOrigin
        var name: String
        var activity: Date?
        var participants: [String] = []
        /// Participants' own fields kept in the conversation (a map keyed by user id).
        var infos: [String: DocumentFields] = [:]
        var lastSender: String?
    }

    struct ConversationPlan {
        var collection: String
        var participants: [[FieldPath]]
        /// A subcollection holding one document per participant (keyed by user id).
        var participantsSubcollection: String?
        var updatedAt: [FieldPath]
        var lastSender: [FieldPath]
    }

    private func conversationPlan(_ scan: Scan) -> ConversationPlan? {
        guard !readsJSON else { return nil }
        let collection: String
        if let names = map.names(.conversations) {
            guard let found = names.lazy.compactMap({ FieldChooser.group(named: $0, in: scan.counts) }).first else { return nil }
            collection = found
        } else {
            guard let found = FieldChooser.collection(FieldChooser.conversationCollections, in: scan.counts) else { return nil }
            collection = found
        }
        let samples = scan.samples[collection]?.map(\.fields) ?? []
        var participants = map[.participants] ?? FieldChooser.field(FieldChooser.participantFields, in: samples).map { [[$0]] } ?? []
        var subcollection: String?
        if participants.isEmpty {
            // A subcollection of documents keyed by user id.
            subcollection = ["participants", "members", "users"].lazy.compactMap { FieldChooser.group(named: "\(collection)/\($0)", in: scan.counts) }.first
        } else if participants.count == 1, participants[0].count == 1, participants[0][0].components.count == 1,
                  !samples.contains(where: { participants[0][0].value(in: $0) != nil }),
                  let group = FieldChooser.group(named: "\(collection)/\(participants[0][0].text)", in: scan.counts) {
            subcollection = group
            participants = []
        }
        guard !participants.isEmpty || subcollection != nil else { return nil }
        let updatedAt = map[.updatedAt]?.compactMap(\.first) ?? FieldChooser.field(FieldChooser.updatedAtFields, in: samples).map { [$0] } ?? []
        let lastSender = map[.lastSender]?.compactMap(\.first) ?? FieldChooser.field(FieldChooser.lastSenderFields, in: samples).map { [$0] } ?? []
        return ConversationPlan(collection: collection, participants: participants, participantsSubcollection: subcollection,
                                updatedAt: updatedAt, lastSender: lastSender)
    }

    /// User ids in a participants value: an array of ids or references (or of maps with
    /// an id), a map keyed by user id, or one id.
    static func participantIDs(_ value: DocumentValue) -> [(id: String, info: DocumentFields?)] {
        switch value {
        case .string, .integer, .reference:
            return PeoplePlan.text(value).map { [($0, nil)] } ?? []
        case .array(let elements):
            return elements.flatMap { element -> [(id: String, info: DocumentFields?)] in
                if case .map(let fields) = element {
                    for key in FieldChooser.idFields {
                        if let id = fields[key].flatMap(PeoplePlan.text), !id.isEmpty { return [(id, fields)] }
                    }
                    return []
                }
                return participantIDs(element)
            }
        case .map(let fields):
            return zip(fields.names, fields.values).map { name, value in
                if case .map(let info) = value { return (name, info) }
                return (name, nil)
            }
        default:
            return []
        }
    }

    static func date(_ value: DocumentValue) -> Date? {
        switch value {
        case .timestamp(let microseconds): return Date(timeIntervalSince1970: Double(microseconds) / 1e6)
        case .string(let text): return ISO8601.parse(text)
        case .integer(let number): return Date(timeIntervalSince1970: Double(number) > 1e11 ? Double(number) / 1000 : Double(number))
        case .double(let number): return Date(timeIntervalSince1970: number > 1e11 ? number / 1000 : number)
        case .map(let fields):
            guard let seconds = (fields["seconds"] ?? fields["_seconds"]) else { return nil }
            let nanos = fields["nanoseconds"] ?? fields["_nanoseconds"]
            func number(_ value: DocumentValue?) -> Double? {
                switch value {
                case .integer(let n): return Double(n)
                case .double(let n): return n
                default: return nil
                }
            }
            guard let whole = number(seconds) else { return nil }
            return Date(timeIntervalSince1970: whole + (number(nanos) ?? 0) / 1e9)
        default: return nil
        }
    }

    private func readConversations(_ plan: ConversationPlan, _ body: (ExportItem) throws -> Void) throws -> [Conversation] {
        var conversations: [String: Int] = [:]
        var list: [Conversation] = []
        var members: [String: [String]] = [:]
        let wanted = Array(Set(plan.participants.flatMap { $0.map(\.head) } + plan.updatedAt.map(\.head) + plan.lastSender.map(\.head))).map { Array($0.utf8) }
        try documents(reportDamage: false, verify: true, { document in
            if let subcollection = plan.participantsSubcollection, document.group == subcollection, let parent = document.parentPath {
                members[parent, default: []].append(document.id)
                return
            }
            guard document.group == plan.collection else { return }
            let (fields, _) = document.fields(wanted: wanted)
            var conversation = Conversation(origin: document.origin, name: "conversation \"\(document.pathText)\"")
            conversation.activity = PeoplePlan.first(plan.updatedAt, in: fields).flatMap { Self.date($0.1) }
            conversation.lastSender = PeoplePlan.first(plan.lastSender, in: fields).flatMap { PeoplePlan.text($0.1) }
            for alternative in plan.participants {
                let found = alternative.compactMap { $0.value(in: fields) }.flatMap(Self.participantIDs)
                guard !found.isEmpty else { continue }
                for (id, info) in found where !conversation.participants.contains(id) {
                    conversation.participants.append(id)
                    if let info { conversation.infos[id] = info }
                }
                break
            }
            conversations[document.pathText] = list.count
            list.append(conversation)
        }, damage: { _ in })
        for (parent, ids) in members {
            if let index = conversations[parent] {
                list[index].participants.append(contentsOf: ids.filter { !list[index].participants.contains($0) })
            }
        }
        for conversation in list {
            if let sender = conversation.lastSender, !conversation.participants.contains(sender) {
                try body(.bad(BadRecord(file: conversation.origin.file, index: conversation.origin.index, line: conversation.origin.line,
                                        reason: "\(conversation.name): its last sender \"\(sender)\" is not a participant; its notification cannot show the sender's picture")))
            }
        }
        return list
    }

    // MARK: People

    /// The first look: every collection's name and count, and its first documents. A
    /// JSON export's first records only (they are all one collection); their damage is
    /// returned, to be reported once.
    private func firstLook() throws -> (scan: Scan, damages: [BadRecord]) {
        var scan = Scan()
        var damages: [BadRecord] = []
        var sampleBytes = 0
        var indexes: [String: Int] = [:]
        var counts: [Int] = []
        var lastCollection = "", last = -1
        let onlyFirst = readsJSON
        do {
            try documents(reportDamage: onlyFirst, verify: false, { document in
                // Documents of one collection often come in runs: its name is hashed when it changes.
                let collection = document.group
                if collection != lastCollection {
                    lastCollection = collection
                    if let index = indexes[collection] {
                        last = index
                    } else {
                        last = counts.count
                        indexes[collection] = last
                        counts.append(0)
                        scan.order.append(collection)
                    }
                }
                counts[last] += 1
                if document.path.count > 1 { scan.references.noteParent(group: collection, parentID: document.path[document.path.count - 2].id) }
                if counts[last] <= FieldChooser.sampleSize, sampleBytes < Self.maxSampleBytes {
                    scan.samples[collection, default: []].append((document.id, document.fields(wanted: nil).0))
                    sampleBytes += max(document.bytes.count, 256)
                } else if onlyFirst {
                    throw Stop()
                }
            }, damage: { damages.append($0); if damages.count > Self.maxDamagesInFirstLook { throw Stop() } })
        } catch is Stop {}
        for (collection, index) in indexes { scan.counts[collection] = counts[index] }
        return (scan, damages)
    }

    /// An Auth account and the record it was read from.
    typealias AuthAccount = (account: FirebaseAuthReader.Account, origin: RecordOrigin)

    /// The Auth accounts beside an export, by id, and their ids in file order.
    struct AuthAccounts {
        var path: String?
        var byID: [String: AuthAccount] = [:]
        var order: [String] = []

        /// The accounts' display names, lower case (they confirm a name field).
        var names: Set<String> {
            Set(byID.values.compactMap { $0.account.displayName?.trimmedWhitespace.lowercased() }.filter { !$0.isEmpty })
        }

        /// The accounts' e-mails, lower case (a document is known by its e-mail too).
        var emails: Set<String> {
            Set(byID.values.compactMap { $0.account.email?.trimmedWhitespace.lowercased() }.filter { !$0.isEmpty })
        }

        /// Reads `path` (nil: none), its bad records to `body`.
        static func read(_ path: String?, limits: ReaderLimits, _ body: (ExportItem) throws -> Void) throws -> AuthAccounts {
            var accounts = AuthAccounts(path: path)
            guard let path else { return accounts }
            try FirebaseAuthReader(path: path, limits: limits).accounts { result in
                switch result {
                case .failure(let bad): try body(.bad(bad))
                case .success(let (account, origin)):
                    let id = account.localId.trimmedWhitespace
                    if accounts.byID[id] == nil { accounts.order.append(id) }
                    accounts.byID[id] = (account, origin)
                }
            }
            return accounts
        }
    }

    /// Reads the people; returns the ids read (when Auth accounts, later parts or
    /// earlier ones need them; else empty).
    @discardableResult
    func read(_ outerBody: (ExportItem) throws -> Void) throws -> Set<String> {
        var skipped = 0
        func body(_ item: ExportItem) throws {
            if case .profile(let profile) = item, skip.contains(profile.id) {
                skipped += 1
                return
            }
            try outerBody(item)
        }
        if readsJSON, !partsFollow, map.namesDocumentID {
            throw ExportError(file: path, reason: "--map \(map.written.first { $0.contains(FieldPath.documentName) } ?? "id=__name__"): \(FieldPath.documentName) is a Firestore document's id, and this is a JSON export, whose records have none: name the field that holds the id (--map id=FIELD); an object keyed by user id is read by its keys without a map")
        }
        // Damage is reported once: a JSON export's first records after the first look, the
        // rest (and all of a Firestore export's) in the pass that counts the people.
        let (scan, damages) = try firstLook()
        for damage in damages { try body(.bad(damage)) }
        let auth = self.auth.byID, authOrder = self.auth.order

        let chosen = try usersCollection(scan, authIDs: Set(auth.keys), authEmails: self.auth.emails)
        guard let collection = chosen?.name else {
            // Every document is still read once with its damage reported, and counted.
            let read = try documents(reportDamage: true, { _ in }, damage: { try body(.bad($0)) })
            try account(read: read, body)
            if partsFollow {
                try body(.note("\(path): no collection of people (\(describeCollections(scan))); the export's other parts are read"))
                return []
            }
            if !auth.isEmpty {
                try body(.note("\(path): no collection of people (\(describeCollections(scan))): the \(auth.count) Firebase Auth accounts are read alone"))
                try emitAuthOnly(auth, authOrder, seen: [], body)
                return []
            }
            throw ExportError(file: path, reason: "no collection of people found (looked for \(FieldChooser.userCollections.prefix(6).joined(separator: ", ")), …); \(describeCollections(scan))\(suggestion(scan))")
        }
        let samples = scan.samples[collection] ?? []
        var plan = FieldChooser.plan(map, samples: samples.map(\.fields), documentIDs: samples.map(\.id), idFromRecord: readsJSON, authNames: self.auth.names)
        plan.storage = storage
        if readsJSON, map[.id] == nil, !samples.isEmpty, samples.allSatisfy({ !$0.id.isEmpty }) {
            // A JSON object keyed by user id: the key is the id.
            plan.id = nil
        }
        if !readsJSON, map[.id] == nil, !samples.isEmpty,
           let (id, evidence) = scan.references.choose(people: collection, counted: try referenceHits(scan, people: collection, current: plan.id),
                                                       current: plan.id, authIDs: Set(auth.keys)) {
            plan.id = id
            plan.evidence[.id] = evidence
        }
        if plan.name.isEmpty && plan.givenName.isEmpty && plan.photo.isEmpty && map[.users] == nil && auth.isEmpty, !readsJSON {
            throw ExportError(file: path, reason: "collection \"\(collection)\" has no name or photo field of the common names; \(describeCollections(scan))\(suggestion(scan))")
        }

        let conversationPlan = conversationPlan(scan)
        var conversations: [Conversation] = []
        if let conversationPlan {
            conversations = try readConversations(conversationPlan, body)
        }
        // Participants, the most recently active conversation's first.
        // `origin`: the first conversation they were seen in, for the reports.
        var rank: [String: (activity: Date, order: Int, origin: RecordOrigin)] = [:]
        var infos: [String: DocumentFields] = [:]
        for conversation in conversations {
            let activity = conversation.activity ?? .distantPast
            for id in conversation.participants {
                if let existing = rank[id] {
                    if activity > existing.activity { rank[id] = (activity, existing.order, existing.origin) }
                } else {
                    rank[id] = (activity, rank.count, conversation.origin)
                }
                if let info = conversation.infos[id], infos[id] == nil || activity >= (rank[id]?.activity ?? .distantPast) { infos[id] = info }
            }
        }

        // A document known to an Auth account by its e-mail alone: that account fills what
        // the document lacks. The account is still read alone by its own id (the id an app
        // signed in with looks its picture up by).
        var byEmail: [String: String] = [:]
        if !auth.isEmpty {
            var counts: [String: Int] = [:]
            for (id, entry) in auth {
                guard let email = entry.account.email?.trimmedWhitespace.lowercased(), !email.isEmpty else { continue }
                counts[email, default: 0] += 1
                byEmail[email] = id
            }
            byEmail = byEmail.filter { counts[$0.key] == 1 }
            if !byEmail.isEmpty { plan.email = FieldChooser.field(FieldChooser.emailFields, in: samples.map(\.fields)).map { [$0] } ?? [] }
        }
        let wanted = plan.wantedHeads
        var tally = PeoplePlan.Tally()
        var seen = Set<String>()
        let trackSeen = !auth.isEmpty || partsFollow || !skip.isEmpty
        func person(_ document: SourceDocument, counting: Bool) throws -> Profile? {
            let (fields, decodeProblems) = document.fields(wanted: wanted)
            var problems = decodeProblems
            var scratch = PeoplePlan.Tally()
            var profile = plan.profile(documentID: document.id, fields: fields, limits: limits,
                                       tally: &scratch, problems: &problems)
            if counting {
                tally.documents += scratch.documents
                for (role, count) in scratch.counts { tally.counts[role, default: 0] += count }
            }
            // Reported once, in the pass that counts (the participants' pass reads them again).
            for problem in problems where counting {
                try body(.bad(BadRecord(file: document.origin.file, index: document.origin.index, line: document.origin.line,
                                        reason: "\(document.name): \(problem)")))
            }
            guard var found = profile else { return nil }
            found.origin = document.origin
            var accountID = auth[found.id] == nil ? nil : found.id
            if accountID == nil, !plan.email.isEmpty, let (_, value) = PeoplePlan.first(plan.email, in: fields),
               let email = PeoplePlan.text(value)?.lowercased(), let id = byEmail[email] {
                accountID = id
            }
            if let account = accountID.flatMap({ auth[$0]?.account }) {
                if found.displayName.isEmpty, !account.name.isEmpty {
                    found = Profile(id: found.id, displayName: account.name, photo: found.photo, colorHex: found.colorHex)
                    found.origin = document.origin
                }
                if found.photo == nil, let photo = account.photo, case .success(let source) = PhotoValue.source(photo, limits: limits, storage: storage) {
                    found.photo = source
                }
            }
            profile = found
            return profile
        }
        var documentsRead = 0
        func forEachPerson(counting: Bool, _ each: (Profile) throws -> Void) throws {
            let read = try documents(reportDamage: counting, { document in
                guard document.group == collection else { return }
                if let profile = try person(document, counting: counting) { try each(profile) }
            }, damage: { bad in
                // JSON: records past the samples are reported here.
                if bad.index > FieldChooser.sampleSize || !damages.contains(bad) { try body(.bad(bad)) }
            })
            if counting { documentsRead = read }
        }

        if rank.isEmpty {
            try forEachPerson(counting: true) { profile in
                if trackSeen { seen.insert(profile.id) }
                try body(.profile(profile))
            }
        } else {
            var participants: [String: Profile] = [:]
            try forEachPerson(counting: true) { profile in
                if rank[profile.id] != nil, participants[profile.id] == nil { participants[profile.id] = profile }
            }
            for (id, place) in rank.sorted(by: { $0.value.activity != $1.value.activity ? $0.value.activity > $1.value.activity : $0.value.order < $1.value.order }) {
                var profile = participants[id]
                if profile == nil, let (account, origin) = auth[id] {
                    profile = FirebaseAuthReader.profile(account, origin: origin, limits: limits).0
                }
                if profile == nil, let info = infos[id] {
                    var problems: [String] = []
                    var scratch = PeoplePlan.Tally()
                    var infoPlan = plan
                    infoPlan.id = nil
                    profile = infoPlan.profile(documentID: id, fields: info, limits: limits, tally: &scratch, problems: &problems)
                }
                var found = profile ?? Profile(id: id, displayName: "")
                if found.origin == nil { found.origin = place.origin }
                // A participant known only by id is left for a later part that may know them.
                if profile != nil || !partsFollow {
                    seen.insert(id)
                    try body(.profile(found))
                }
            }
            for conversation in conversations {
                if let sender = conversation.lastSender, conversation.participants.contains(sender),
                   participants[sender] == nil, auth[sender] == nil, conversation.infos[sender] == nil {
                    try body(.bad(BadRecord(file: conversation.origin.file, index: conversation.origin.index, line: conversation.origin.line,
                                            reason: "\(conversation.name): its last sender \"\(sender)\" has no document in \"\(collection)\" (nor an Auth account); its notification cannot show the sender's picture")))
                }
            }
            try forEachPerson(counting: false) { profile in
                guard rank[profile.id] == nil else { return }
                if trackSeen { seen.insert(profile.id) }
                try body(.profile(profile))
            }
        }
        var note = "\(path): people from \(readsJSON ? "the records" : "collection \"\(collection)\"") (\(tally.documents) documents"
            + (chosen?.why.map { "; \($0)" } ?? "") + "): \(FieldChooser.describe(plan))"
        let had = tally.counts.sorted { $0.key < $1.key }.map { "\($0.value) had \($0.key)" }
        if !had.isEmpty { note += "; " + had.joined(separator: ", ") }
        if let conversationPlan {
            note += "; \(conversations.count) conversations in \"\(conversationPlan.collection)\", \(rank.count) participants first"
        }
        if map.isEmpty { note += " (chosen from the documents; --map sets them)" }
        if let observer = PeopleChoice.observer {
            let key: String? = readsJSON ? (partsFollow ? nil : map.names(.users)?.first) : collection
            observer.add(plan.choice(source: path, collection: readsJSON ? (partsFollow ? "node \"\(collection)\"" : "the records") : collection,
                                     collectionKey: key, collectionEvidence: chosen?.why, map: map,
                                     documentID: readsJSON && !partsFollow ? nil : FieldPath.documentName, tally: tally))
        }
        try body(.note(note))
        try account(read: documentsRead, body)
        if skipped > 0 {
            try body(.note("\(path): \(skipped) people here were read from an earlier part of the export too: the earlier kept"))
        }
        if !auth.isEmpty && !partsFollow { try emitAuthOnly(auth, authOrder, seen: seen.union(skip), body) }
        return seen
    }

    /// The Auth accounts of no id in `seen`, read alone (the last part of an export).
    func readAuthAlone(seen: Set<String>, _ body: (ExportItem) throws -> Void) throws {
        if !auth.byID.isEmpty { try emitAuthOnly(auth.byID, auth.order, seen: seen, body) }
    }

    private func emitAuthOnly(_ auth: [String: AuthAccount], _ order: [String], seen: Set<String>,
                              _ body: (ExportItem) throws -> Void) throws {
        var count = 0
        for id in order where !seen.contains(id) {
            guard let (account, origin) = auth[id] else { continue }
            let (profile, problem) = FirebaseAuthReader.profile(account, origin: origin, limits: limits)
            if let problem { try body(.bad(problem)) }
            try body(.profile(profile))
            count += 1
        }
        try body(.note("\(self.auth.path ?? "Auth"): \(auth.count) Firebase Auth accounts, \(auth.count - count) with a document, \(count) read from Auth alone"))
    }
}

/// A JSON value read as a document value (JSONDecoder: true and false are not numbers).
struct JSONDocumentValue: Decodable {
    /// The value of a record's bytes, as JSONDecoder reads them; nil when they are not
    /// JSON. Read by `JSONReader`; what it does not read as JSONDecoder would (nesting past
    /// its limit, a whole number past 2^53 written with a fraction or an exponent,
    /// anything it refuses) goes to JSONDecoder, whose answer it is.
    static func value(of bytes: [UInt8]) -> DocumentValue? {
        let read = bytes.withUnsafeBytes { buffer -> DocumentValue? in
            var reader = JSONReader(bytes: buffer)
            guard let value = try? reader.documentValue(depth: 0), (try? reader.expectEnd()) != nil else { return nil }
            return value
        }
        if let read { return read }
        return (try? JSONDecoder().decode(JSONDocumentValue.self, from: Data(bytes)))?.value
    }

    var value: DocumentValue

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { value = .null }
        else if let flag = try? container.decode(Bool.self) { value = .bool(flag) }
        else if let number = try? container.decode(Int64.self) { value = .integer(number) }
        else if let number = try? container.decode(Double.self) { value = .double(number) }
        else if let text = try? container.decode(String.self) { value = .string(text) }
        else if let array = try? container.decode([JSONDocumentValue].self) { value = .array(array.map(\.value)) }
        else {
            let object = try container.decode([String: JSONDocumentValue].self)
            var fields = DocumentFields()
            for key in object.keys.sorted() { fields[key] = object[key]!.value }
            value = .map(fields)
        }
    }
}

extension JSONReader {
    /// The value at the reader as `JSONDocumentValue` decodes it: an object's keys in
    /// order, the first of a key written twice kept; a number an integer when it is a
    /// whole one (`1.0`, `1e2`) within Int64, else a double.
    mutating func documentValue(depth: Int) throws -> DocumentValue {
        guard depth < JSONReader.maxDepth else { throw failure("values nested deeper than \(JSONReader.maxDepth)") }
        switch try peek() {
        case UInt8(ascii: "{"):
            var pairs: [(name: String, value: DocumentValue)] = []
            var names = Set<String>()
            try members { reader, key in
                guard let name = String(validating: key, as: UTF8.self) else { throw reader.failure("a key that is not UTF-8") }
                let value = try reader.documentValue(depth: depth + 1)
                if names.insert(name).inserted { pairs.append((name, value)) }
            }
            pairs.sort { $0.name < $1.name }
            return .map(DocumentFields(pairs.map { ($0.name, $0.value) }))
        case UInt8(ascii: "["):
            var values: [DocumentValue] = []
            try elements { reader in values.append(try reader.documentValue(depth: depth + 1)) }
            return .array(values)
        case UInt8(ascii: "\""):
            return .string(try stringValue())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try boolean())
        case UInt8(ascii: "n"):
            _ = try null()
            return .null
        default:
            let at = offset
            let token = try numberToken()
            let text = String(decoding: token, as: UTF8.self)
            let hasFractionOrExponent = token.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
            if !hasFractionOrExponent, let whole = Int64(text) { return .integer(whole) }
            guard let number = Double(text), number.isFinite else { throw Failure(offset: at, reason: "a number out of range") }
            if number.rounded() == number, hasFractionOrExponent {
                // A whole number written with a fraction or an exponent: an integer, as
                // JSONDecoder reads it; past 2^53 the double may not be it exactly.
                guard abs(number) < 9_007_199_254_740_992 else { throw Failure(offset: at, reason: "a whole number past 2^53") }
                return .integer(Int64(number))
            }
            return .double(number)
        }
    }
}
