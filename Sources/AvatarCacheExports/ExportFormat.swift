import Foundation

/// An export format: the name `--format` takes, and the reader that declares it
/// (`ExportFormatReader`, beside the reader). The formats are the registered readers'
/// (`registered`), `allCases` in detection order.
public struct ExportFormat: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    public let rawValue: String
    /// The reader that declares this format.
    public let kind: any ExportFormatReader.Type

    /// A registered format's name; nil for any other.
    public init?(rawValue: String) {
        guard let kind = Self.registered.first(where: { $0.name == rawValue }) else { return nil }
        self.init(kind)
    }

    init(_ kind: any ExportFormatReader.Type) {
        rawValue = kind.name
        self.kind = kind
    }

    public static func == (a: ExportFormat, b: ExportFormat) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Every format avatar-cache reads, in the order detection asks them: the first that
    /// recognises an input reads it. Earlier ones are the more particular: a Firestore
    /// export and a vCard are told by their names, Auth's `"users"` before NexusAI's,
    /// conversations (whose participants have a `"displayName"`) before NexusAI's users,
    /// whose keys are the most common.
    public static let registered: [any ExportFormatReader.Type] = [
        FirestoreReader.self,
        JamiReader.self,
        FirebaseAuthReader.self,
        NexusConversationsReader.self,
        MonicaReader.self,
        NexusUsersReader.self,
    ]

    public static var allCases: [ExportFormat] { registered.map { $0.format } }

    public var description: String { rawValue }

    public func reader(path: String, limits: ReaderLimits, map: FieldMap = FieldMap()) -> ExportReader {
        kind.reader(path: path, limits: limits, map: map)
    }

    /// The formats for `--help`: one line each, name and summary, in detection order.
    public static var detectionHelp: String {
        let width = registered.map { $0.name.count }.max() ?? 0
        let lines = registered.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)" }
        return (["Exports, each read as the first of these formats that recognises it unless --format names one (docs/inputs.md says how each is told):"] + lines)
            .joined(separator: "\n")
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

    /// The format of `path`: the first registered that recognises it. A folder none
    /// recognises is an error naming what it holds when it holds another format's files
    /// (a folder of NexusAI JSON), else the first reader of folders' (Jami's, which says
    /// what the folder lacks when it reads it). Throws, saying what it saw, when nothing
    /// matches.
    public static func detect(path: String) throws -> ExportFormat {
        let sample = try ExportSample(path: path)
        for kind in registered where try kind.recognises(sample) {
            return kind.format
        }
        if sample.isFolder { return try folderFormat(sample) }
        let evidence = registered.map { "\($0.name): \($0.evidence)" }.joined(separator: "; ")
        throw ExportError(file: path, reason: "cannot tell the export format from its name or its first 64 KiB (\(try sample.shownStart())); each is told by \(evidence); pass --format \(allCases.map(\.rawValue).joined(separator: "|"))")
    }

    /// A folder no format recognised.
    private static func folderFormat(_ sample: ExportSample) throws -> ExportFormat {
        let readers = registered.compactMap { kind in kind.folderFiles.map { (kind, $0) } }
        for (kind, files) in readers {
            guard let first = try sample.files(of: kind).first else { continue }
            let format = try detect(path: first)
            let names = readers.map(\.1.name)
            throw ExportError(file: sample.path, reason: "a folder of \(format.rawValue) files: give the files (a glob like \(sample.path)/*\(files.extensions[0])); folders are read for \(names.dropLast().joined(separator: ", "))\(names.count > 1 ? " and " : "")\(names.last ?? "")")
        }
        guard let (kind, _) = readers.first else { throw ExportError(file: sample.path, reason: "a folder, and no format reads folders") }
        return kind.format
    }
}
