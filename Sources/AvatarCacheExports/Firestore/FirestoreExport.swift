import AvatarCacheModel
import AvatarCacheSupport
import Foundation

/// A Firestore export on disk, as `gcloud firestore export` and `firebase
/// emulators:export` write it, and whatever an emulator export holds beside it.
///
/// ```
/// <root>/firebase-export-metadata.json       the emulator's: names the parts below
/// <root>/firestore_export/                    (the folder its metadata names: what the emulator imports)
///   <name>.overall_export_metadata            LevelDB log: per kind, its metadata's path, documents, bytes
///   all_namespaces/all_kinds/                 (or kind_<collection>/ with --collection-ids, namespace_<ns>/…)
///     all_namespaces_all_kinds.export_metadata    { 1: {…}, 2: { 1: kind, 2: output-0, 2: output-1, … } }
///     output-0 … output-N                     LevelDB logs of EntityProto documents
/// <root>/auth_export/accounts.json            Firebase Auth
/// <root>/database_export/<instance>.json      the Realtime Database
/// <root>/storage_export/blobs/…               Cloud Storage objects (their metadata in storage_export/metadata/)
/// ```
/// Every output file of every kind is read: those its kind's metadata names (the name
/// field repeated in one message, or one message per file) and those beside it. The
/// overall metadata states how many documents each kind holds; `stated` sums them.
struct FirestoreExport {
    /// Every output file, each kind's in numeric order.
    var outputFiles: [String] = []
    /// Output files a metadata file names that are not there: (metadata, file).
    var missing: [(metadata: String, file: String)] = []
    /// Kind metadata an overall metadata names that is not there, and the documents it stated.
    var missingKinds: [(overall: String, file: String, documents: Int)] = []
    /// The documents the overall metadata files state, when any does; and those files.
    var stated: Int?
    var overallMetadata: [String] = []
    /// The Auth export beside it (an emulator export), if any.
    var authAccounts: String?
    /// The Realtime Database exports beside it (an emulator export's `database_export/*.json`).
    var databaseExports: [String] = []
    /// Cloud Storage objects beside it (an emulator export's `storage_export`).
    var storage: String?
    /// What was found that a person should know (output files no metadata names, …).
    var notes: [String] = []

    static func isExport(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue {
            let name = (path as NSString).lastPathComponent
            return name.hasSuffix(".export_metadata") || outputNumber(name) != nil
        }
        return FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("firebase-export-metadata.json"))
            || !metadataFiles(under: path, overall: true, depth: 2).isEmpty
    }

    /// N of `output-N` (zero-padded or not).
    static func outputNumber(_ name: String) -> Int? {
        guard name.hasPrefix("output-") else { return nil }
        let digits = name.dropFirst(7)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Folders of an emulator export that are not Firestore's.
    static let otherParts: Set<String> = ["auth_export", "database_export", "storage_export", "functions_export", "pubsub_export"]

    static func locate(_ path: String) throws -> FirestoreExport {
        var export = FirestoreExport()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        if !isDirectory.boolValue {
            if path.hasSuffix(".overall_export_metadata") {
                return try locate((path as NSString).deletingLastPathComponent)
            } else if path.hasSuffix(".export_metadata") {
                try export.add(metadata: path, seen: [])
            } else if outputNumber((path as NSString).lastPathComponent) != nil {
                export.outputFiles = [path]
            } else {
                throw ExportError(file: path, reason: "not a Firestore export: give its folder (with the .overall_export_metadata file), a .export_metadata file or an output-N file")
            }
            return export
        }
        var firestoreFolder: String? = path
        var isEmulator = false
        let emulator = (path as NSString).appendingPathComponent("firebase-export-metadata.json")
        if let data = FileManager.default.contents(atPath: emulator) {
            isEmulator = true
            struct Root: Decodable {
                struct Part: Decodable { var path: String? }
                var firestore: Part?
                var auth: Part?
                var database: Part?
                var storage: Part?
            }
            guard let root = try? JSONDecoder().decode(Root.self, from: data) else {
                throw ExportError(file: emulator, reason: "not the emulator's export metadata (expected JSON with \"firestore\" and \"auth\" parts)")
            }
            func part(_ part: Root.Part?, _ folder: String) -> String? {
                // A part of this export: a folder below its root, never a path elsewhere.
                let relative = part?.path ?? folder
                guard isBelow(relative) else { return nil }
                let candidate = (path as NSString).appendingPathComponent(relative)
                return FileManager.default.fileExists(atPath: candidate) ? candidate : nil
            }
            if let auth = part(root.auth, "auth_export") {
                let accounts = (auth as NSString).appendingPathComponent("accounts.json")
                if FileManager.default.fileExists(atPath: accounts) { export.authAccounts = accounts }
            }
            if let database = part(root.database, "database_export") {
                export.databaseExports = ((try? FileManager.default.contentsOfDirectory(atPath: database)) ?? [])
                    .filter { $0.hasSuffix(".json") }.sorted().map { (database as NSString).appendingPathComponent($0) }
            }
            export.storage = part(root.storage, "storage_export")
            firestoreFolder = part(root.firestore, "firestore_export")
        }
        // An emulator's root is what `firebase emulators:start --import` loads: its own
        // Firestore folder. A production export kept elsewhere under it (written there by a
        // script) is not part of it: noted, and read when given as an input of its own.
        let searchRoot = isEmulator ? firestoreFolder : path
        var elsewhere: [String] = []
        if isEmulator {
            let own = firestoreFolder.map { ($0 as NSString).standardizingPath + "/" }
            for file in metadataFiles(under: path, overall: true, depth: 5) {
                if let own, (file as NSString).standardizingPath.hasPrefix(own) { continue }
                let folder = (file as NSString).deletingLastPathComponent
                if !elsewhere.contains(folder) { elsewhere.append(folder) }
            }
            // A production export's folder holds its overall metadata; its kinds' are below it.
            elsewhere = elsewhere.filter { folder in !elsewhere.contains { folder.hasPrefix($0 + "/") } }
            for folder in elsewhere.prefix(3) {
                export.notes.append("\(folder): a Firestore export inside the emulator's export, which the emulator does not import: not read (give this folder as an input of its own to read it)")
            }
        }
        let overall = (searchRoot.map { metadataFiles(under: $0, overall: true, depth: 5) } ?? []).filter { $0.hasSuffix(".overall_export_metadata") }
        var named: [String: Int] = [:]
        var anyStated = false
        var stated = 0
        for file in overall {
            export.overallMetadata.append(file)
            for kind in OverallMetadata.kinds(file) {
                guard isBelow(kind.path) else {
                    export.missingKinds.append((file, kind.path, kind.documents ?? 0))
                    anyStated = anyStated || kind.documents != nil
                    stated += kind.documents ?? 0
                    continue
                }
                let kindPath = ((file as NSString).deletingLastPathComponent as NSString).appendingPathComponent(kind.path)
                let resolved = (kindPath as NSString).standardizingPath
                guard named[resolved] == nil else { continue }
                named[resolved] = kind.documents ?? 0
                if let documents = kind.documents {
                    anyStated = true
                    stated += documents
                }
                if !FileManager.default.fileExists(atPath: resolved) {
                    export.missingKinds.append((file, kind.path, kind.documents ?? 0))
                }
            }
        }
        if anyStated { export.stated = stated }
        var kinds = searchRoot.map { metadataFiles(under: $0, overall: false, depth: 6) } ?? []
        // Kind metadata an overall metadata names below the walk's depth: read too.
        let walked = Set(kinds.map { ($0 as NSString).standardizingPath })
        for (named, _) in named where !walked.contains(named) && isRegularFile(named) && named.hasSuffix(".export_metadata") {
            kinds.append(named)
        }
        if kinds.isEmpty && export.missingKinds.isEmpty {
            if export.authAccounts != nil || !export.databaseExports.isEmpty {
                if let firestoreFolder, FileManager.default.fileExists(atPath: firestoreFolder) {
                    export.notes.append("\(firestoreFolder): no Firestore documents (no *.export_metadata file); the export's other parts are read")
                }
                return export
            }
            if let inside = elsewhere.first {
                throw ExportError(file: path, reason: "the emulator's export has no Firestore part of its own; the Firestore export inside it (\(inside)) is not what the emulator imports: give that folder as the input to read it")
            }
            throw ExportError(file: firestoreFolder ?? path, reason: "no Firestore export here: no *.export_metadata file in this folder or the five below it")
        }
        var seen = Set<String>()
        for file in kinds {
            try export.add(metadata: file, seen: seen)
            seen.formUnion(export.outputFiles)
        }
        return export
    }

    /// The `.export_metadata` files (or, with `overall`, also `.overall_export_metadata`)
    /// under `folder`, `depth` levels at most, in path order; an emulator export's other
    /// parts are not looked into.
    static func metadataFiles(under folder: String, overall: Bool, depth: Int) -> [String] {
        var found: [String] = []
        func walk(_ folder: String, _ depth: Int) {
            guard depth >= 0, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
            for name in names.sorted() {
                let path = (folder as NSString).appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    if !otherParts.contains(name) { walk(path, depth - 1) }
                } else if name.hasSuffix(".overall_export_metadata") ? overall : name.hasSuffix(".export_metadata") {
                    found.append(path)
                }
            }
        }
        walk(folder, depth)
        return found
    }

    /// The output files a kind's metadata names, and those beside it, in numeric order;
    /// those named and missing are noted. `seen`: output files already taken.
    private mutating func add(metadata path: String, seen: Set<String>) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ExportError(file: path, reason: "cannot read")
        }
        let folder = (path as NSString).deletingLastPathComponent
        let named = KindMetadata.outputNames(Array(data))
        let beside = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { Self.outputNumber($0) != nil && Self.isRegularFile((folder as NSString).appendingPathComponent($0)) }
        func order(_ name: String) -> (Int, String) { (Self.outputNumber((name as NSString).lastPathComponent) ?? Int.max, name) }
        var files: [String] = []
        for name in named.sorted(by: { order($0) < order($1) }) {
            // A file beside the metadata, as Firebase names them: never a path elsewhere
            // (a hostile export naming /dev/zero or ../../ is not read).
            guard Self.isPlainName(name) else {
                missing.append((path, name))
                continue
            }
            let file = (folder as NSString).appendingPathComponent(name)
            if Self.isRegularFile(file) {
                files.append(file)
            } else {
                missing.append((path, name))
            }
        }
        let unnamed = beside.filter { name in !files.contains((folder as NSString).appendingPathComponent(name)) }
        if !named.isEmpty, !unnamed.isEmpty {
            notes.append("\(path) does not name \(unnamed.count) output file\(unnamed.count == 1 ? "" : "s") beside it (\(unnamed.sorted { order($0) < order($1) }.prefix(4).joined(separator: ", "))); read too")
        }
        files += unnamed.map { (folder as NSString).appendingPathComponent($0) }
        files.sort { order($0) < order($1) }
        outputFiles += files.filter { !seen.contains($0) && !outputFiles.contains($0) }
    }

    /// A regular file, not a link, a device or a pipe (a hostile export's output-0 linked
    /// to /dev/zero would be read forever).
    static func isRegularFile(_ path: String) -> Bool { ExportFormat.regularFileSize(path) != nil }

    /// A file name of the folder itself: no separator, not `.` or `..`, no NUL.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// A path below a folder: relative, with no `..` component.
    static func isBelow(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
    }

    /// Calls `body` with every document of every output file in order, each decoded to
    /// its path only; `fields(wanted:)` decodes its fields. Damage (a checksum, a length,
    /// a document that does not decode) comes as a `BadRecord` naming the file and the
    /// byte offset, when `reportDamage`. `verify` (by default `reportDamage`): whether
    /// checksums are checked; a first look at the collections need not, the pass that
    /// reads the documents for good does. Returns the documents read.
    @discardableResult
    func forEach(maxRecordBytes: Int, reportDamage: Bool, verify: Bool? = nil, _ body: (SourceDocument) throws -> Void, damage: (BadRecord) throws -> Void) throws -> Int {
        if reportDamage {
            for (overall, file, documents) in missingKinds {
                let why = Self.isBelow(file) ? "which is missing" : "which is not below it (not read)"
                try damage(BadRecord(file: overall, index: 0, line: 0, reason: "names the kind metadata \"\(abbreviated(file, limit: 200))\", \(why): its \(documents) documents are not read"))
            }
            for (metadata, file) in missing {
                let why = Self.isPlainName(file) ? "which is missing" : "which is not a file beside it (not read)"
                try damage(BadRecord(file: metadata, index: 0, line: 0, reason: "names the output file \"\(abbreviated(file, limit: 200))\", \(why): its documents are not read"))
            }
        }
        var read = 0
        for file in outputFiles {
            var log: LevelDBLogReader
            do {
                log = try LevelDBLogReader(path: file, maxRecordBytes: maxRecordBytes, verify: verify ?? reportDamage)
            } catch {
                if reportDamage { try damage(BadRecord(file: file, index: 0, line: 0, reason: "cannot open: \(error.localizedDescription); its documents are not read")) }
                continue
            }
            defer { log.close() }
            var index = 0
            while let item = try log.next() {
                switch item {
                case .damage(let offset, let reason):
                    if reportDamage { try damage(BadRecord(file: file, index: index + 1, line: 0, reason: "at byte \(offset): \(reason)")) }
                case .record(let offset, let bytes):
                    index += 1
                    let origin = RecordOrigin(file: file, index: index, line: 0)
                    let decoded: EntityProto.Decoded
                    do {
                        decoded = try bytes.withUnsafeBytes { try EntityProto.decode($0, wanted: []) }
                    } catch let error as EntityProto.DecodeError {
                        if reportDamage { try damage(BadRecord(file: file, index: index, line: 0, reason: "document at byte \(offset): \(error.reason) (byte \(error.offset) of it)")) }
                        continue
                    }
                    guard let path = decoded.path, !path.isEmpty else {
                        if reportDamage { try damage(BadRecord(file: file, index: index, line: 0, reason: "document at byte \(offset) has no key (path)")) }
                        continue
                    }
                    read += 1
                    try body(SourceDocument(path: path, origin: origin, offset: offset, bytes: bytes))
                }
            }
        }
        return read
    }
}

/// The messages of a metadata file: a LevelDB log's records (the overall metadata, and a
/// kind's in some exports) or, when the file is not one, the file as one message.
enum MetadataMessages {
    static func messages(_ bytes: [UInt8]) -> [[UInt8]] {
        if let records = logRecords(bytes) { return records }
        return [bytes]
    }

    /// The records, when the file is a LevelDB log whose every record's checksum holds
    /// (read as the output files are).
    static func logRecords(_ bytes: [UInt8]) -> [[UInt8]]? {
        var log = LevelDBLogReader(bytes: bytes, maxRecordBytes: bytes.count)
        var records: [[UInt8]] = []
        while let item = try? log.next() {
            guard case .record(_, let record) = item else { return nil }
            records.append(record)
        }
        return records.isEmpty ? nil : records
    }

    /// A message's fields: (number, varint value or bytes), nil when it is not a message.
    static func fields(_ bytes: [UInt8]) -> [(field: Int, number: UInt64?, bytes: [UInt8]?)]? {
        bytes.withUnsafeBytes { raw in
            var wire = ProtoWire(raw)
            var fields: [(field: Int, number: UInt64?, bytes: [UInt8]?)] = []
            do {
                while wire.position < raw.count {
                    let (field, type) = try wire.tag()
                    switch type {
                    case 0: fields.append((field, try wire.varint(), nil))
                    case 2:
                        let length = try wire.length()
                        fields.append((field, nil, wire.bytes(at: wire.position, length: length)))
                        wire.position += length
                    default: try wire.skip(field: field, type: type)
                    }
                }
                return fields
            } catch {
                return nil
            }
        }
    }
}

/// A kind's `.export_metadata`: `{ 1: { 1: label, 2: start, 3: end }, 2: { 1: kind, 2:
/// output file (repeated), 3: { 1: kind } (production) } }`. Firebase names every file in
/// one message (the name field repeated; MovieLens's production export names 66); a
/// message per file is read the same. The kind is `""` in the emulator's, `__all__` or the
/// collection id in production's; the files are beside the metadata whatever it says.
enum KindMetadata {
    static func outputNames(_ bytes: [UInt8]) -> [String] {
        var names: [String] = []
        for message in MetadataMessages.messages(bytes) {
            guard let fields = MetadataMessages.fields(message) else { continue }
            for (field, _, value) in fields where field == 2 {
                guard let value, let inner = MetadataMessages.fields(value) else { continue }
                for (innerField, _, name) in inner where innerField == 2 {
                    guard let name, !name.isEmpty, !name.contains(0), let text = String(validating: name, as: UTF8.self) else { continue }
                    let file = text.replacingOccurrences(of: "\\", with: "/")
                    if !names.contains(file) { names.append(file) }
                }
            }
        }
        return names
    }
}

/// An `.overall_export_metadata`: a LevelDB log whose message lists each kind: `{ 1: {
/// 1: { namespaces and kinds }, 2: the kind's metadata path, 3: documents, 4: bytes } }`.
enum OverallMetadata {
    struct Kind { var path: String; var documents: Int?; var bytes: Int? }

    static func kinds(_ file: String) -> [Kind] {
        guard let data = FileManager.default.contents(atPath: file) else { return [] }
        var kinds: [Kind] = []
        for message in MetadataMessages.messages(Array(data)) {
            guard let fields = MetadataMessages.fields(message) else { continue }
            for (field, _, value) in fields where field == 1 {
                guard let value, let inner = MetadataMessages.fields(value) else { continue }
                var kind = Kind(path: "", documents: nil, bytes: nil)
                for (innerField, number, bytes) in inner {
                    switch innerField {
                    // An export made on Windows separates the path with backslashes.
                    case 2: if let bytes { kind.path = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\\", with: "/") }
                    // Bounded: a hostile count cannot overflow the sums.
                    case 3: kind.documents = number.map { Int(min($0, 1 << 40)) }
                    case 4: kind.bytes = number.map { Int(clamping: $0) }
                    default: break
                    }
                }
                if kind.path.hasSuffix(".export_metadata") { kinds.append(kind) }
            }
        }
        return kinds
    }
}

/// A document of a source as read, before its fields are decoded.
struct SourceDocument {
    var path: [(collection: String, id: String)]
    var origin: RecordOrigin
    /// Byte offset of its record in its file (Firestore), for messages.
    var offset: Int?
    /// A Firestore entity's bytes, or a JSON record's fields already read.
    var bytes: [UInt8] = []
    var parsed: DocumentFields?

    var collection: String { path.last?.collection ?? "" }
    /// Its collection group: the collections of its path without the document ids
    /// (`users`, `users/public_profile`): a subcollection named as a top-level collection
    /// (`security_groups/user/user`) is not that collection.
    var group: String {
        path.count == 1 ? path[0].collection : path.map(\.collection).joined(separator: "/")
    }
    var id: String { path.last?.id ?? "" }
    var parentPath: String? {
        path.count > 1 ? path.dropLast().map { "\($0.collection)/\($0.id)" }.joined(separator: "/") : nil
    }
    var pathText: String { path.map { "\($0.collection)/\($0.id)" }.joined(separator: "/") }

    /// Its fields (only `wanted` top-level ones, when given), and fields left out and why.
    func fields(wanted: [[UInt8]]?) -> (DocumentFields, [String]) {
        if let parsed { return (parsed, []) }
        do {
            let decoded = try bytes.withUnsafeBytes { try EntityProto.decode($0, wanted: wanted) }
            return (decoded.fields, decoded.problems)
        } catch {
            return (DocumentFields(), ["\(error)"])
        }
    }

    /// What a message calls it: `users/u1 (output-0 at byte 123)`.
    var name: String {
        offset.map { "document \(pathText) (at byte \($0))" } ?? "record \(origin.index) \"\(id)\""
    }
}
