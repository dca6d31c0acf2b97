import AvatarCacheSupport
import Foundation

/// Reads a Firebase export (`--format firestore`) as one input: an export folder as `gcloud
/// firestore export` or `firebase emulators:export` writes it, a kind's `.export_metadata`
/// or one `output-N` file. People come from a collection of user documents (the field
/// map's, or the one whose documents look like people), conversations' participants
/// first; an emulator export's Realtime Database (`database_export/*.json`, read through
/// the same field map) and Firebase Auth accounts are merged in, an empty or absent
/// Firestore stopping neither (`MappedPeopleReader`). A person read from an earlier part
/// is not read again: Firestore, then the Realtime Database, then Auth alone.
public struct FirestoreReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits
    public let map: FieldMap

    public init(path: String, limits: ReaderLimits = ReaderLimits(), map: FieldMap = FieldMap()) {
        self.path = path
        self.limits = limits
        self.map = map
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        let export = try FirestoreExport.locate(path)
        for note in export.notes { try body(.note(note)) }
        let databases = export.databaseExports
        var storage = FirebaseStorage(bucket: limits.storageBucket)
        if let given = limits.storageBucket, storage.bucket == nil {
            try body(.note("--storage-bucket \"\(abbreviated(given, limit: 80))\" is not a bucket's name (my-app.appspot.com or gs://my-app.appspot.com): ignored"))
        }
        if let folder = export.storage {
            storage.add(exportFolder: folder)
            for (metadata, name) in storage.missingBlobs {
                try body(.bad(BadRecord(file: metadata, index: 0, line: 0, reason: "names the Storage object \"\(abbreviated(name, limit: 120))\", whose blob is missing: a photo kept there is not read")))
            }
            try body(.note("\(folder): \(storage.blobs.count) Storage objects read from the export, not downloaded; \(storage.bucket.map { "storage paths are in bucket \"\($0)\"" } ?? "no bucket for storage paths (--storage-bucket names one)")"))
        } else if let bucket = storage.bucket {
            try body(.note("\(path): storage paths and gs:// photos are downloaded from bucket \"\(bucket)\""))
        }
        var reader = MappedPeopleReader(path: path, source: .firestore(export), map: map, limits: limits)
        // Read once for every part: each person's account fills what their record lacks.
        reader.auth = try .read(export.authAccounts, limits: limits, body)
        reader.storage = storage.isEmpty ? nil : storage
        guard !databases.isEmpty else {
            try reader.read(body)
            return
        }
        reader.partsFollow = true
        let hasFirestore = !export.outputFiles.isEmpty || !export.missing.isEmpty || !export.missingKinds.isEmpty || (export.stated ?? 0) > 0
        var seen = Set<String>()
        if hasFirestore { seen = try reader.read(body) }
        for database in databases {
            // One database export that cannot be read is reported; the others are read.
            let choice: DatabaseExport.Choice
            do {
                choice = try DatabaseExport.peopleNode(database, map: map, limits: limits, authIDs: Set(reader.auth.byID.keys), authEmails: reader.auth.emails)
            } catch let error as ExportError {
                try body(.bad(BadRecord(file: error.file, index: 0, line: 0, reason: error.reason)))
                continue
            }
            guard case .node(let key, let why) = choice else {
                if case .none(let seenNodes) = choice {
                    try body(.note("\(database): no node of people in this Realtime Database export (\(seenNodes))"))
                }
                continue
            }
            try body(.note("\(database): people from node \"\(key)\" (\(why))"))
            var part = MappedPeopleReader(path: database, source: .json(path: database, recordsKey: key), map: map.withoutCollections, limits: limits)
            part.auth = reader.auth
            part.storage = reader.storage
            part.partsFollow = true
            part.skip = seen
            seen.formUnion(try part.read(body))
        }
        try reader.readAuthAlone(seen: seen, body)
    }
}

/// An emulator's Realtime Database export: one JSON tree per database instance
/// (`database_export/<instance>.json`), people as the members of a top-level node keyed by
/// user id (`{"users": {"<uid>": {"name": …, "photoURL": …}}}`).
enum DatabaseExport {
    /// Largest export looked at whole to choose its people's node; a larger one takes the
    /// field map's `users` or a common name.
    static let maxLookBytes = 64 << 20

    /// The top-level node of people, and why; or, when none is, the nodes there are.
    enum Choice {
        case node(String, String)
        case none(String)
    }

    /// The top-level node of people: the map's `users` when the tree has it, else the node
    /// whose members look most like people (as a Firestore collection is chosen). The file
    /// is looked at once.
    static func peopleNode(_ path: String, map: FieldMap, limits: ReaderLimits, authIDs: Set<String>, authEmails: Set<String> = []) throws -> Choice {
        let nodes = try topLevel(path, limits: limits)
        guard let nodes else {
            // Too large to look at whole: the map's name, or the common one.
            let key = map.names(.users)?.first ?? "users"
            return .node(key, "the export is larger than \(maxLookBytes >> 20) MB: \(map.names(.users) == nil ? "the common name" : "the map's"), not looked at")
        }
        if let names = map.names(.users), let key = names.first(where: { nodes.samples[$0] != nil }) {
            return .node(key, "the map's")
        }
        if let (key, why) = FieldChooser.peopleCollection(nodes.samples, order: nodes.order, authIDs: authIDs, authEmails: authEmails) {
            return .node(key, "chosen by its members: \(why)")
        }
        if let key = FieldChooser.collection(FieldChooser.userCollections, in: nodes.samples.mapValues(\.count)) {
            return .node(key, "chosen by its name")
        }
        if nodes.order.isEmpty { return .none("no node of objects") }
        return .none("nodes of objects: " + nodes.order.prefix(8).map { "\"\($0)\" (\(nodes.samples[$0]?.count ?? 0))" }.joined(separator: ", "))
    }

    /// The top-level nodes whose members are objects, each with its first members as
    /// samples; nil when the file is too large to look at whole.
    static func topLevel(_ path: String, limits: ReaderLimits) throws -> (order: [String], samples: [String: [(id: String, fields: DocumentFields)]])? {
        guard let size = ExportFormat.regularFileSize(path) else {
            throw ExportError(file: path, reason: "not a regular file (a link, a device or a pipe): not read")
        }
        guard size <= maxLookBytes else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ExportError(file: path, reason: "cannot read")
        }
        if data.isEmpty || data == Data("null".utf8) { return ([], [:]) }
        let root: JSONDocumentValue
        do {
            root = try JSONDecoder().decode(JSONDocumentValue.self, from: data)
        } catch {
            throw ExportError(file: path, reason: "not a Realtime Database export (not JSON): \(error.localizedDescription)")
        }
        guard case .map(let tree) = root.value else { return ([], [:]) }
        var order: [String] = []
        var samples: [String: [(id: String, fields: DocumentFields)]] = [:]
        for (name, value) in zip(tree.names, tree.values) {
            guard case .map(let members) = value else { continue }
            let objects = zip(members.names, members.values).compactMap { id, member -> (id: String, fields: DocumentFields)? in
                if case .map(let fields) = member { return (id, fields) }
                return nil
            }
            guard !objects.isEmpty else { continue }
            order.append(name)
            samples[name] = Array(objects.prefix(FieldChooser.sampleSize))
        }
        return (order, samples)
    }
}

extension ExportFormat {
    public static let firestore = FirestoreReader.format
}

extension FirestoreReader: ExportFormatReader {
    public static let name = "firestore"
    public static let summary = "Firestore exports: folders, .export_metadata, output-N"
    public static let evidence = "an export folder, a .export_metadata or an output-N file"

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        FirestoreExport.isExport(sample.path)
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        FirestoreReader(path: path, limits: limits, map: map)
    }
}
