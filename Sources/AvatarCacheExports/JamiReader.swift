import AvatarCacheModel
import AvatarCacheMonograms
import Foundation

/// Reads Jami profiles: vCard files (`.vcf`, one or several cards each) or a folder of
/// them. `FN` (else `N`) is the name; `PHOTO` is the photo, inline, in the vCard 3.0
/// form (`PHOTO;ENCODING=b;TYPE=JPEG:<base64>`, folded lines), the 2.1 form
/// (`PHOTO;JPEG;ENCODING=BASE64:<base64>`, continuation lines up to a blank line; the bare
/// `B` of `PHOTO;JPEG;B:`), bare base64 without a parameter (Thunderbird's
/// `PHOTO:/9j/…`) or a 4.0 `data:` URI: the cache key is SHA-256 of the photo bytes, as Jami
/// keys its avatars. A photo given as a URL (Google Contacts, iCloud, `VALUE=uri`) is
/// downloaded like any photo URL, under the same network rules.
///
/// A name that is really an account id (40 hex characters), an empty name, or a group
/// card gets a glyph instead of letters, as Jami draws it. Broken base64 or a card without
/// `END:VCARD` is a reported bad record; the person still gets a monogram where the
/// card is otherwise whole.
///
/// Cards as other address books write them are read too: UTF-16 files (Apple's Address
/// Book, with or without a byte-order mark), `BEGIN:VCARD` with trailing blanks, inline
/// photos as `data:` URIs in every form (escaped commas, with `ENCODING=b`), company cards
/// named by `ORG`, cards named only by `NICKNAME`, vCard 2.1 quoted-printable
/// values with soft line breaks (Android, Nokia, Outlook), `CHARSET=` (ISO-8859-1,
/// windows-1252, Shift_JIS…; bytes that are not UTF-8 without one are read as windows-1252
/// and reported), iOS 5–6
/// line ends (`\r\r\n`), several `FN` lines (the `PREF` one, else the first), and
/// initials from `N` when it has given and family names (given first), as contact apps
/// take them; the display-name rule stays for cards with only `FN`.
public struct JamiReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        // Cards each file begins (BEGIN:VCARD, nested ones included) against those read.
        var begun = 0, read = 0
        for file in try ExportFormat.filesToRead(path, endingWith: ExportFormat.vCardExtensions, kind: ".vcf") {
            let (fileBegun, fileRead) = try readFile(file, body)
            begun += fileBegun
            read += fileRead
        }
        try body(.count(InputCount(source: path, statedBy: "its BEGIN:VCARD lines", unit: "cards", stated: begun, read: read)))
    }

    /// Reads one file: the cards it begins, and those read as people.
    private func readFile(_ file: String, _ body: (ExportItem) throws -> Void) throws -> (begun: Int, read: Int) {
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw ExportError(file: file, reason: "cannot read")
        }
        defer { try? handle.close() }
        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        // Cards are used as they are read, one at a time. The first waits for the second:
        // a file of one card names it by the file, of several by the file and its place.
        var first: VCard?
        var count = 0, read = 0
        try VCardParser(maxCardBytes: limits.maxRecordBytes).cards(from: .file(handle, path: file)) { card in
            count += 1
            guard count > 1 else {
                first = card
                return
            }
            if var held = first {
                first = nil
                held.fallbackID = "\(stem)#\(held.ordinal)"
                if try emit(held, index: held.ordinal, file: file, body) { read += 1 }
            }
            var card = card
            card.fallbackID = "\(stem)#\(card.ordinal)"
            if try emit(card, index: card.ordinal, file: file, body) { read += 1 }
        }
        if var only = first {
            only.fallbackID = stem
            if try emit(only, index: only.ordinal, file: file, body) { read += 1 }
        }
        if count == 0 {
            try body(.bad(BadRecord(file: file, index: 1, line: 1, reason: "no BEGIN:VCARD in the file")))
        }
        return (count, read)
    }

    /// Whether the card was read as a person (else it is a bad record).
    @discardableResult
    private func emit(_ card: VCard, index: Int, file: String, _ body: (ExportItem) throws -> Void) throws -> Bool {
        func bad(_ reason: String) -> ExportItem {
            .bad(BadRecord(file: file, index: index, line: card.line, reason: reason))
        }
        if let problem = card.problem {
            try body(bad(problem))
            return false
        }
        for problem in card.textProblems { try body(bad(problem)) }
        let id = card.uid ?? card.fallbackID
        func trimmed(_ text: String?) -> String { (text ?? "").trimmedWhitespace }
        let given = trimmed(card.givenName), family = trimmed(card.familyName)
        // The order the card shows the person's names in: the one of the two that comes
        // first in FN (黄世勇: family first; "Mustermann, Heiko" is the sorting form of a
        // name said given first), else family first for names in CJK scripts.
        let cjk = Initials.writtenFamilyNameFirst(family + given)
        let familyFirst: Bool
        if let shown = card.formattedName, let familyAt = shown.range(of: family, options: .caseInsensitive), !family.isEmpty, !given.isEmpty {
            let sortingForm = shown[familyAt.upperBound...].hasPrefix(",")
            familyFirst = !sortingForm && (shown.range(of: given, options: .caseInsensitive).map { familyAt.lowerBound < $0.lowerBound } ?? true)
        } else {
            familyFirst = cjk
        }
        // A company's card (Apple's X-ABShowAs:COMPANY, vCard 4's KIND:org) shows ORG.
        var name = card.isCompany && !trimmed(card.organization).isEmpty ? trimmed(card.organization) : trimmed(card.formattedName)
        if name.isEmpty {
            // N as it is shown: 山田太郎 (CJK: family first, no space), else "Given Family".
            let middle = trimmed(card.middleName)
            name = (familyFirst ? [family, given, middle] : [given, middle, family]).filter { !$0.isEmpty }.joined(separator: cjk ? "" : " ")
        }
        if name.isEmpty { name = trimmed(card.nickname) }
        if name.isEmpty { name = trimmed(card.organization) }
        // A group (or a card that only holds other cards: a list of them) without a name of
        // its own: its list's name, else its members' ("Ann Example, Bob Roe and 3 more").
        let isList = card.isGroup || (name.isEmpty && !card.memberNames.isEmpty)
        if isList, name.isEmpty {
            name = trimmed(card.groupName)
            if name.isEmpty, !card.memberNames.isEmpty {
                let shown = card.memberNames.prefix(2).joined(separator: ", ")
                name = card.memberNames.count > 2 ? "\(shown) and \(card.memberNames.count - 2) more" : shown
            }
        }
        let isAccountID = name.count == 40 && name.allSatisfy(\.isHexDigit)
        let glyph: MonogramGlyph? = isList ? .group : (name.isEmpty || isAccountID ? .person : nil)
        var initials: String? = glyph == nil ? nil : ""
        // Initials from N (given and family, in the order the name is shown), as contact
        // apps take them, when the name shown is made of N's names (or is N); otherwise
        // (a company shown by its name with a contact person in N) from the name shown.
        let shownIsN = card.formattedName.map { shown in
            shown.trimmedWhitespace.isEmpty || (shown.localizedCaseInsensitiveContains(given) && shown.localizedCaseInsensitiveContains(family))
        } ?? true
        if glyph == nil, !card.isCompany, !given.isEmpty, !family.isEmpty, shownIsN {
            initials = familyFirst ? Initials.from(firstName: family, lastName: given) : Initials.from(firstName: given, lastName: family)
        }
        var profile = Profile(id: id, displayName: name, initials: initials, glyph: glyph)
        profile.origin = RecordOrigin(file: file, index: index, line: card.line)
        switch card.photo {
        case .none:
            break
        case .base64(let value)?:
            switch Base64.decode(value, maxBytes: limits.maxInlineBytes) {
            case .bytes(let bytes) where !bytes.isEmpty:
                profile.photo = .inline(InlinePhoto(bytes: bytes))
            case .tooLarge:
                try body(bad("PHOTO is larger than \(limits.maxInlineBytes) bytes: monogram used"))
            default:
                try body(bad("PHOTO is not valid base64: monogram used"))
            }
        case .dataURI(let uri)?:
            do {
                profile.photo = .inline(InlinePhoto(bytes: try DataURL.decode(uri, maxBytes: limits.maxInlineBytes)))
            } catch let error as DataURL.Error {
                try body(bad("PHOTO: \(error.description): monogram used"))
            }
        case .link(let link)?:
            // A URL (Google Contacts, iCloud, `VALUE=uri`): downloaded like any photo URL.
            switch PhotoValue.source(link, limits: limits) {
            case .success(let source): profile.photo = source
            case .failure(let problem): try body(bad("PHOTO: \(problem.description): monogram used"))
            }
        }
        try body(.profile(profile))
        return true
    }
}

extension ExportFormat {
    public static let jami = JamiReader.format
}

extension JamiReader: ExportFormatReader {
    public static let name = "jami"
    public static let summary = "Jami's and other vCards: .vcf files or a folder of them"
    public static let evidence = "a .vcf or .vcard name, a folder of them, or BEGIN:VCARD first"
    public static let folderFiles: FolderFiles? = FolderFiles(extensions: ExportFormat.vCardExtensions, name: "Jami vCards")

    public static func recognises(_ sample: ExportSample) throws -> Bool {
        // A vCard is told by its name: a folder holding one is Jami's.
        if sample.isFolder { return try !sample.files(of: self).isEmpty }
        return try sample.hasExtension(ExportFormat.vCardExtensions) || sample.start().uppercased().hasPrefix("BEGIN:VCARD")
    }

    public static func reader(path: String, limits: ReaderLimits, map: FieldMap) -> any ExportReader {
        JamiReader(path: path, limits: limits)
    }
}
