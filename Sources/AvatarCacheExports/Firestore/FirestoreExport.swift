import AvatarCacheLookup
import Foundation

/// A Firestore export on disk, as `gcloud firestore export` and `firebase
/// emulators:export` write it: a folder with `<name>.overall_export_metadata`, and below it
/// one `<namespace>_<kind>.export_metadata` per namespace and kind, each naming its
/// `output-N` files (LevelDB logs of entities). The emulator's export root holds
/// `firebase-export-metadata.json`, which names the Firestore folder and the Auth one
/// (`auth_export/accounts.json`).
struct FirestoreExport {
    /// Every output file, each kind's in numeric order.
    var outputFiles: [String] = []
    /// Output files a metadata file names that are not there: (metadata, file).
    var missing: [(metadata: String, file: String)] = []
    /// The Auth export beside it (an emulator export), if any.
    var authAccounts: String?

    static func isExport(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        if !isDirectory.boolValue {
            let name = (path as NSString).lastPathComponent
            return name.hasSuffix(".export_metadata") || outputNumber(name) != nil
        }
        return FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("firebase-export-metadata.json"))
            || !metadataFiles(under: path, overall: true, depth: 1).isEmpty
    }

    /// N of `output-N`.
    static func outputNumber(_ name: String) -> Int? {
        guard name.hasPrefix("output-") else { return nil }
        return Int(name.dropFirst(7))
    }

    static func locate(_ path: String) throws -> FirestoreExport {
        var export = FirestoreExport()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        if !isDirectory.boolValue {
            if path.hasSuffix(".export_metadata") && !path.hasSuffix(".overall_export_metadata") {
                try export.add(metadata: path)
            } else if outputNumber((path as NSString).lastPathComponent) != nil {
                export.outputFiles = [path]
            } else {
                throw ExportError(file: path, reason: "not a Firestore export: give its folder (with the .overall_export_metadata file), a .export_metadata file or an output-N file")
            }
            return export
        }
        var firestoreFolder = path
        let emulator = (path as NSString).appendingPathComponent("firebase-export-metadata.json")
        if let data = FileManager.default.contents(atPath: emulator) {
            struct Root: Decodable {
                struct Part: Decodable { var path: String? }
                var firestore: Part?
                var auth: Part?
            }
            guard let root = try? JSONDecoder().decode(Root.self, from: data) else {
                throw ExportError(file: emulator, reason: "not the emulator's export metadata (expected JSON with \"firestore\" and \"auth\" parts)")
            }
            if let auth = root.auth {
                let accounts = ((path as NSString).appendingPathComponent(auth.path ?? "auth_export") as NSString).appendingPathComponent("accounts.json")
                if FileManager.default.fileExists(atPath: accounts) { export.authAccounts = accounts }
            }
            guard let firestore = root.firestore else { return export }
            firestoreFolder = (path as NSString).appendingPathComponent(firestore.path ?? "firestore_export")
        }
        let metadata = metadataFiles(under: firestoreFolder, overall: false, depth: 4)
        if metadata.isEmpty {
            if export.authAccounts != nil, !FileManager.default.fileExists(atPath: firestoreFolder) { return export }
            throw ExportError(file: firestoreFolder, reason: "no Firestore export here: no *.export_metadata file in this folder or the three below it")
        }
        for file in metadata { try export.add(metadata: file) }
        return export
    }

    /// The `.export_metadata` files (or, with `overall`, also `.overall_export_metadata`)
    /// under `folder`, `depth` levels at most, in path order.
    static func metadataFiles(under folder: String, overall: Bool, depth: Int) -> [String] {
        var found: [String] = []
        func walk(_ folder: String, _ depth: Int) {
            guard depth >= 0, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
            for name in names.sorted() {
                let path = (folder as NSString).appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    walk(path, depth - 1)
                } else if name.hasSuffix(".overall_export_metadata") ? overall : name.hasSuffix(".export_metadata") {
                    found.append(path)
                }
            }
        }
        walk(folder, depth)
        return found
    }

    /// The output files a kind's metadata names (field 2 of the message: { 1: folder, 2: name }),
    /// in numeric order; those missing are noted.
    private mutating func add(metadata path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ExportError(file: path, reason: "cannot read")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var names: [String] = []
        let parsed: Bool = data.withUnsafeBytes { raw in
            var wire = ProtoWire(raw)
            do {
                while wire.position < raw.count {
                    let (field, type) = try wire.tag()
                    guard field == 2, type == 2 else { try wire.skip(field: field, type: type); continue }
                    let end = wire.position + (try wire.length())
                    var directory = "", name = ""
                    while wire.position < end {
                        let (inner, innerType) = try wire.tag()
                        switch (inner, innerType) {
                        case (1, 2): directory = try wire.string()
                        case (2, 2): name = try wire.string()
                        default: try wire.skip(field: inner, type: innerType)
                        }
                    }
                    if !name.isEmpty { names.append(directory.isEmpty ? name : (directory as NSString).appendingPathComponent(name)) }
                }
                return true
            } catch {
                return false
            }
        }
        if !parsed || names.isEmpty {
            // Not the message expected: the output files beside it.
            names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { Self.outputNumber($0) != nil }
        }
        names.sort { (Self.outputNumber(($0 as NSString).lastPathComponent) ?? 0, $0) < (Self.outputNumber(($1 as NSString).lastPathComponent) ?? 0, $1) }
        for name in names {
            let file = name.hasPrefix("/") ? name : (folder as NSString).appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: file) {
                outputFiles.append(file)
            } else {
                missing.append((path, name))
            }
        }
    }

    /// Calls `body` with every document of every output file in order, each decoded to
    /// its path only; `fields(wanted:)` decodes its fields. Damage (a checksum, a length,
    /// a document that does not decode) comes as a `BadRecord` naming the file and the
    /// byte offset, when `reportDamage`. `verify` (by default `reportDamage`): whether
    /// checksums are checked; a first look at the collections need not, the pass that
    /// reads the documents for good does.
    func forEach(maxRecordBytes: Int, reportDamage: Bool, verify: Bool? = nil, _ body: (SourceDocument) throws -> Void, damage: (BadRecord) throws -> Void) throws {
        if reportDamage {
            for (metadata, file) in missing {
                try damage(BadRecord(file: metadata, index: 0, line: 0, reason: "names the output file \"\(file)\", which is missing: its documents are not read"))
            }
        }
        for file in outputFiles {
            var log: LevelDBLogReader
            do {
                log = try LevelDBLogReader(path: file, maxRecordBytes: maxRecordBytes, verify: verify ?? reportDamage)
            } catch {
                if reportDamage { try damage(BadRecord(file: file, index: 0, line: 0, reason: "cannot open: \(error.localizedDescription)")) }
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
                    try body(SourceDocument(path: path, origin: origin, offset: offset, bytes: bytes))
                }
            }
        }
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
