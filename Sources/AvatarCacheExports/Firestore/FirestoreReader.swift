import AvatarCacheLookup
/// Reads a Firestore export (`--format firestore`): an export folder as `gcloud firestore
/// export` or `firebase emulators:export` writes it, a kind's `.export_metadata` or one
/// `output-N` file. People come from a collection of user documents (the field map's, or
/// chosen from the common names), conversations' participants first; an emulator
/// export's Firebase Auth accounts are merged in (`MappedPeopleReader`).
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
        var reader = MappedPeopleReader(path: path, source: .firestore(export), map: map, limits: limits)
        reader.authPath = export.authAccounts
        try reader.read(body)
    }
}
