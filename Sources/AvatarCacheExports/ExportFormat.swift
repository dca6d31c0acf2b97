import Foundation

/// The export formats, one reader each.
public enum ExportFormat: String, Sendable, CaseIterable, Codable {
    case nexusUsers = "nexus-users"
    case nexusConversations = "nexus-conversations"
    case monica
    case jami
    case firestore
    case firebaseAuth = "firebase-auth"

    public func reader(path: String, limits: ReaderLimits, map: FieldMap = FieldMap()) -> ExportReader {
        switch self {
        case .nexusUsers: return NexusUsersReader(path: path, limits: limits, map: map)
        case .firestore: return FirestoreReader(path: path, limits: limits, map: map)
        case .firebaseAuth: return FirebaseAuthReader(path: path, limits: limits)
        case .nexusConversations: return NexusConversationsReader(path: path, limits: limits)
        case .monica: return MonicaReader(path: path, limits: limits)
        case .jami: return JamiReader(path: path, limits: limits)
        }
    }

    /// A regular file's size; nil for a link, a device, a pipe or nothing (a hostile
    /// export's part linked to /dev/zero would be read forever).
    static func regularFileSize(_ path: String) -> Int? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular else { return nil }
        return attributes[.size] as? Int ?? 0
    }

    static let vCardExtensions = [".vcf", ".vcard"]   // RFC 6350 registers both
    static let pageExtensions = [".json", ".ndjson"]

    /// The files of a folder whose names end with one of `extensions` (any case), paths
    /// in name order: what the readers of a folder (Jami vCards, Monica pages) read.
    static func folderFiles(_ path: String, endingWith extensions: [String]) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw ExportError(file: path, reason: "cannot list the folder: \(error.localizedDescription)")
        }
        return names.filter { name in extensions.contains { name.lowercased().hasSuffix($0) } }.sorted()
            .map { (path as NSString).appendingPathComponent($0) }
    }

    /// The files a reader reads for `path`: a folder's files with these extensions, in
    /// name order (an error naming `kind` when there is none), else the path itself.
    static func filesToRead(_ path: String, endingWith extensions: [String], kind: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let files = try folderFiles(path, endingWith: extensions)
        if files.isEmpty { throw ExportError(file: path, reason: "the folder holds no \(kind) file") }
        return files
    }

    /// Tells the format from a folder (Jami vCards), the extension, or the keys in the
    /// first 64 KiB. Throws, saying what it saw, when nothing matches.
    public static func detect(path: String) throws -> ExportFormat {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        if FirestoreExport.isExport(path) { return .firestore }
        if isDirectory.boolValue {
            // Jami's vCards, or a folder of saved JSON pages (Monica's): told by its first file.
            if try !folderFiles(path, endingWith: vCardExtensions).isEmpty { return .jami }
            if let json = try folderFiles(path, endingWith: pageExtensions).first {
                let format = try detect(path: json)
                guard format == .monica else {
                    throw ExportError(file: path, reason: "a folder of \(format.rawValue) files: give the files (a glob like \(path)/*.json); folders are read for Jami vCards and Monica pages")
                }
                return format
            }
            return .jami
        }
        if vCardExtensions.contains(where: path.lowercased().hasSuffix) { return .jami }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ExportError(file: path, reason: "cannot open")
        }
        defer { try? handle.close() }
        // A vCard in UTF-16 is told by its text, not its zero bytes.
        let head = String(decoding: try VCardBytes(bytes: [UInt8](handle.readData(ofLength: 64 * 1024))).next(), as: UTF8.self)
        let trimmed = head.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if trimmed.uppercased().hasPrefix("BEGIN:VCARD") { return .jami }
        if FirebaseAuthReader.looksLikeCSV(head) { return .firebaseAuth }
        func has(_ key: String) -> Bool { head.contains("\"\(key)\"") }
        if has("localId") && (has("kind") || has("users")) { return .firebaseAuth }
        if has("participantIds") || has("conversations") { return .nexusConversations }
        if has("first_name") || (has("data") && has("information")) { return .monica }
        if has("profileImageUrl") || has("displayName") || has("users") { return .nexusUsers }
        // What it starts with, as text only: a binary file's bytes are not echoed.
        let start = trimmed.prefix(80)
        let printable = start.unicodeScalars.allSatisfy { $0 == "\n" || $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F && $0 != "\u{FFFD}") }
        let sample = printable ? "it starts with \"\(start.replacingOccurrences(of: "\n", with: "\\n"))\"" : "it is not text (a binary file?)"
        throw ExportError(file: path, reason: "cannot tell the export format: no vCard, no \"participantIds\", \"first_name\", \"localId\" or \"profileImageUrl\" key in the first 64 KiB, no Firestore export (\(sample)); pass --format \(ExportFormat.allCases.map(\.rawValue).joined(separator: "|"))")
    }
}
