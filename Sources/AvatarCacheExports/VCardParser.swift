import Foundation

/// A tolerant vCard 2.1/3.0/4.0 parser: unfolds lines, reads the properties we need.
///
/// It reads a file a megabyte at a time and hands each card on as soon as it ends, so a
/// process holds one card, not the file: an address book of a few thousand cards with
/// photos, as Apple's and Google's exports write it (one file), costs what its largest
/// card costs. A line or card over `maxCardBytes` is cut there (the card is reported as
/// too large), so neither is ever held whole. Values are bytes until they are read as
/// text, each as its `CHARSET` says (UTF-8 by default); a photo's base64 is never text.
struct VCardParser {
    let maxCardBytes: Int

    /// `maxCardBytes` as large as a user may give it, with room to count past it.
    init(maxCardBytes: Int) {
        self.maxCardBytes = min(maxCardBytes, 1 << 50)
    }

    /// How deep cards may nest (vCard 2.1's `AGENT`: a card holding one level of cards, as
    /// Android's importer reads it): a `BEGIN:VCARD` deeper than this ends the innermost
    /// open card as unfinished instead, so a file holds at most two cards' bytes at once.
    static let maxNesting = 2

    /// Reads `source` (chunks of the file as UTF-8, `VCardBytes`) and calls `body` with
    /// each card at its `END:VCARD`. A `BEGIN:VCARD` inside an open card starts a nested
    /// card (as vCard 2.1 allows and Android's importer reads it): the nested one is handed
    /// on at its end, the outer one at its own, after it. Cards still open at the end of
    /// the input are reported: as unfinished when another card began inside them (a card
    /// whose `END:VCARD` was lost), else as truncated. Each card's `ordinal` is the place
    /// of its `BEGIN:VCARD` in the file.
    func cards(from source: VCardBytes, _ body: (VCard) throws -> Void) throws {
        var lines = PhysicalLines(source: source, maxLineBytes: maxCardBytes)
        // The open cards, innermost last, with the bytes each has had.
        var open: [(card: VCard, bytes: Int)] = []
        var begun = 0
        // One logical line (folded lines joined), cut at `maxCardBytes` + 1 bytes.
        var logical: [UInt8]?
        var logicalStart = 0
        var inBase64Block = false
        var inQuotedPrintable = false
        var number = 0

        func append<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
            let room = maxCardBytes + 1 - logical!.count
            if room > 0 { logical!.append(contentsOf: bytes.prefix(room)) }
        }
        func finish(_ line: [UInt8], _ start: Int) throws {
            let (name, parameters, value) = Self.split(line)
            if name == "BEGIN", Self.isVCard(value) {
                if open.count == Self.maxNesting {
                    var unfinished = open.removeLast().card
                    unfinished.problem = unfinished.problem ?? Self.unfinished
                    try body(unfinished)
                }
                if !open.isEmpty { open[open.count - 1].card.hasNestedCard = true }
                begun += 1
                open.append((VCard(line: start, ordinal: begun), 0))
                return
            }
            guard var (card, bytes) = open.popLast() else { return }
            bytes += line.count
            if bytes > maxCardBytes, card.problem == nil {
                card.problem = "vCard is larger than \(maxCardBytes) bytes"
            }
            if name == "END", Self.isVCard(value) {
                // A card nested in another is one of its members: named in it.
                if !open.isEmpty, let member = card.shownName, !member.isEmpty {
                    open[open.count - 1].card.memberNames.append(member)
                }
                try body(card)
                return
            }
            // A card already too large keeps nothing more: it is reported, not used.
            if card.problem == nil {
                read(name, parameters, value, into: &card)
            }
            open.append((card, bytes))
        }

        while let line = try lines.next() {
            number += 1
            if inQuotedPrintable, logical?.last == UInt8(ascii: "=") {
                logical!.removeLast()
                append(line)
                continue
            }
            if let first = line.first, first == 32 || first == 9, logical != nil {
                append(line.dropFirst())
                continue
            }
            if inBase64Block, !line.isEmpty, !line.contains(UInt8(ascii: ":")), logical != nil {
                append(line)
                continue
            }
            if let finished = logical {
                logical = nil
                try finish(finished, logicalStart)
            }
            logical = line.isEmpty ? nil : line
            logicalStart = number
            inBase64Block = Self.hasPrefix(line, "PHOTO") && (Self.contains(line[...], "BASE64") || Self.hasBareBParameter(line[...]))
            inQuotedPrintable = Self.contains(line[..<(line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex)], "QUOTED-PRINTABLE")
        }
        if let finished = logical { try finish(finished, logicalStart) }
        while var (card, _) = open.popLast() {
            card.problem = card.problem ?? (card.hasNestedCard ? Self.unfinished : "the file ends before END:VCARD (truncated?)")
            try body(card)
        }
    }

    static let unfinished = "no END:VCARD before the next BEGIN:VCARD"

    /// One property of a card: the ones we show, kept; the rest, skipped unread.
    private func read(_ name: String, _ parameters: [String], _ value: ArraySlice<UInt8>, into card: inout VCard) {
        switch name {
        case "FN":
            // The preferred one (PREF), else the first.
            let preferred = Self.isPreferred(parameters)
            if card.formattedName == nil || (preferred && !card.formattedNameIsPreferred) {
                card.formattedName = Self.unescape(decode(value, parameters, property: "FN", problems: &card.textProblems))
                card.formattedNameIsPreferred = preferred
            }
        case "N":
            // As for FN: the preferred one, else the first (name and initials from one card line).
            let preferred = Self.isPreferred(parameters)
            if card.familyName == nil || (preferred && !card.structuredNameIsPreferred) {
                let parts = Self.splitUnescaped(decode(value, parameters, property: "N", problems: &card.textProblems))
                card.givenName = parts.count > 1 ? parts[1] : ""
                card.familyName = parts.first ?? ""
                card.middleName = parts.count > 2 ? parts[2] : ""
                card.structuredNameIsPreferred = preferred
            }
        case "NICKNAME":
            if card.nickname == nil {
                card.nickname = Self.splitUnescaped(decode(value, parameters, property: "NICKNAME", problems: &card.textProblems).replacingOccurrences(of: ",", with: ";")).first
            }
        case "ORG":
            if card.organization == nil {
                card.organization = Self.splitUnescaped(decode(value, parameters, property: "ORG", problems: &card.textProblems)).first
            }
        case "X-ABSHOWAS":
            if Self.keyword(value) == "COMPANY" { card.isCompany = true }
        case "UID", "X-JAMI-ID", "X-RINGACCOUNTID":
            if card.uid == nil || name == "UID" {
                let uid = Self.text(value).trimmingCharacters(in: .whitespaces)
                if !uid.isEmpty { card.uid = uid }
            }
        case "KIND", "X-ADDRESSBOOKSERVER-KIND":
            let kind = Self.text(value).trimmingCharacters(in: .whitespaces).lowercased()
            if !kind.isEmpty, card.kind == nil || name == "KIND" { card.kind = kind }
            if kind == "org" || kind == "organization" { card.isCompany = true }
        case "X-ANDROID-CUSTOM":
            // Android's own export of a nickname: `vnd.android.cursor.item/nickname;Nick;…`.
            let type = "vnd.android.cursor.item/nickname;"
            if card.nickname == nil, Self.text(value.prefix(type.utf8.count)) == type {
                let fields = Self.splitUnescaped(decode(value, parameters, property: name, problems: &card.textProblems))
                if fields.count > 1, !fields[1].isEmpty { card.nickname = fields[1] }
            }
        case "X-JAMI-GROUP", "MEMBER", "X-ADDRESSBOOKSERVER-MEMBER":
            card.hasListMarks = true
        case "X-EVOLUTION-LIST":
            if Self.keyword(value) == "TRUE" { card.hasListMarks = true }
        case "X-DL":
            // A distribution list: `X-DL:<its name>:<member>;<member>…`.
            card.hasListMarks = true
            let text = Self.unescape(decode(value, parameters, property: name, problems: &card.textProblems))
            let listName = text.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces)
            if card.groupName == nil, !listName.isEmpty { card.groupName = listName }
        case "PHOTO":
            let upper = parameters.map { $0.uppercased() }
            // 3.0's ENCODING=b, 2.1's BASE64 (alone too), 2.1's bare B (`PHOTO;JPEG;B:`).
            let isBase64 = upper.contains { $0 == "ENCODING=B" || $0 == "ENCODING=BASE64" || $0 == "BASE64" || $0 == "B" }
            let trimmed = value.drop { $0 == 32 || $0 == 9 }
            if Self.hasPrefix(trimmed, "DATA:") {
                // A data: URI, also where ENCODING=b says base64 (both forms at once), and
                // with vCard 3's text escaping (Nextcloud writes "base64\,"): no
                // backslash belongs in a data URI, nor a blank.
                var uri: [UInt8] = []
                uri.reserveCapacity(trimmed.count)
                var escaped = false
                for byte in trimmed {
                    if escaped {
                        escaped = false
                        if byte == UInt8(ascii: "n") || byte == UInt8(ascii: "N") { continue }
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                        continue
                    }
                    if !Base64.isBlank(byte) { uri.append(byte) }
                }
                card.photo = .dataURI(uri)
            } else if isBase64 || Self.isBareBase64(trimmed) {
                // Thunderbird writes `PHOTO:/9j/4AAQ…`: base64 with no parameter at all.
                card.photo = .base64(value)
            } else {
                card.photo = .link(Self.text(trimmed).trimmingCharacters(in: .whitespaces))
            }
        default: break
        }
    }

    /// A value as text where no `CHARSET` applies (ids, keywords, links): UTF-8 when it is,
    /// else one character per byte (ISO-8859-1).
    static func text<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(validating: bytes, as: UTF8.self) ?? String(bytes: Array(bytes), encoding: .isoLatin1) ?? String(decoding: bytes, as: UTF8.self)
    }

    /// A keyword's value (`VCARD`, `COMPANY`): its text without blanks at either end, in upper case.
    static func keyword(_ value: ArraySlice<UInt8>) -> String {
        text(value).trimmingCharacters(in: .whitespaces).uppercased()
    }

    /// `VCARD` of `BEGIN:VCARD`/`END:VCARD`, with what old writers leave after it
    /// (`END:VCARD;`, Symbian's test corpus; blanks).
    static func isVCard(_ value: ArraySlice<UInt8>) -> Bool {
        keyword(value).trimmingCharacters(in: CharacterSet(charactersIn: "; \t")) == "VCARD"
    }

    /// `line` starts with `prefix` (upper-case ASCII), in any case.
    /// A `B` parameter alone among a property's (`PHOTO;JPEG;B:`, vCard 2.1 as phones write it).
    static func hasBareBParameter(_ line: ArraySlice<UInt8>) -> Bool {
        let head = line[..<(line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex)]
        return head.split(separator: UInt8(ascii: ";")).dropFirst().contains { $0.count == 1 && ($0.first == UInt8(ascii: "B") || $0.first == UInt8(ascii: "b")) }
    }

    /// A value that is base64 and nothing else (no scheme, only the alphabet, blanks and
    /// padding, long enough to be a picture): a photo inline without a parameter saying so.
    static func isBareBase64(_ value: ArraySlice<UInt8>) -> Bool {
        var count = 0
        for byte in value {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                count += 1
            case _ where Base64.isBlank(byte):
                continue
            default:
                return false
            }
        }
        return count >= 64
    }

    static func hasPrefix<Bytes: Sequence<UInt8>>(_ line: Bytes, _ prefix: String) -> Bool {
        var bytes = line.makeIterator()
        return prefix.utf8.allSatisfy { letter in bytes.next().map(upper) == letter }
    }

    /// `line` contains `word` (upper-case ASCII), in any case.
    static func contains(_ line: ArraySlice<UInt8>, _ word: String) -> Bool {
        line.indices.contains { hasPrefix(line[$0...], word) }
    }

    @inline(__always) static func upper(_ byte: UInt8) -> UInt8 {
        byte >= 97 && byte <= 122 ? byte - 32 : byte
    }

    /// A line's NAME (upper case, without a group prefix), parameters and value.
    static func split(_ line: [UInt8]) -> (String, [String], ArraySlice<UInt8>) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return ("", [], []) }
        var parts = line[..<colon].split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true).map { text($0) }
        var name = parts.isEmpty ? "" : String(decoding: parts.removeFirst().utf8.map(upper), as: UTF8.self)
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        return (name, parts, line[(colon + 1)...])
    }

    /// A value's text: its bytes, quoted-printable decoded when `ENCODING=QUOTED-PRINTABLE`
    /// (2.1), read in the declared `CHARSET` (default UTF-8). What cannot be decoded is
    /// reported in `problems` and shown with U+FFFD.
    func decode(_ value: ArraySlice<UInt8>, _ parameters: [String], property: String, problems: inout [String]) -> String {
        let upper = parameters.map { $0.uppercased() }
        let quotedPrintable = upper.contains { $0 == "ENCODING=QUOTED-PRINTABLE" || $0 == "QUOTED-PRINTABLE" }
        let charset = upper.first { $0.hasPrefix("CHARSET=") }.map { String($0.dropFirst(8)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        var bytes = Array(value)
        if quotedPrintable { bytes = Self.quotedPrintableDecoded(bytes) }
        if let charset, charset != "UTF-8", charset != "UTF8" {
            guard let encoding = Self.encoding(named: charset) else {
                problems.append("\(property): unknown CHARSET=\(charset): read as UTF-8")
                return String(decoding: bytes, as: UTF8.self)
            }
            if let text = String(data: Data(bytes), encoding: encoding) { return text }
            problems.append("\(property): not valid \(charset): shown with U+FFFD")
            return String(decoding: bytes, as: UTF8.self)
        }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        // Bytes that are not UTF-8 and carry no CHARSET: the legacy charsets address books
        // wrote without saying (Japanese phones' Shift_JIS, Chinese GB18030 and Big5, Korean
        // EUC-KR, Russian KOI8-R), else windows-1252 (old German and French exports), each
        // tried and the one that reads cleanly as its own script chosen; still reported.
        if let (text, charset) = CharsetGuess.decode(bytes) {
            problems.append("\(property): not valid UTF-8 and no CHARSET given: read as \(charset)")
            return text
        }
        problems.append("\(property): not valid UTF-8 and no CHARSET given: read as windows-1252")
        return Self.utf8OrWindows1252(bytes)
    }

    /// Each UTF-8 sequence as UTF-8, each other byte as windows-1252 (its five unassigned
    /// bytes as U+FFFD).
    static func utf8OrWindows1252(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0
            if length > 0, index + length <= bytes.count,
               let text = String(validating: bytes[index..<(index + length)], as: UTF8.self), let scalar = text.unicodeScalars.first {
                scalars.append(scalar)
                index += length
                continue
            }
            scalars.append(windows1252(lead))
            index += 1
        }
        return String(scalars)
    }

    private static let windows1252High: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
        0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]

    static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
        (0x80...0x9F).contains(byte) ? Unicode.Scalar(windows1252High[Int(byte) - 0x80])! : Unicode.Scalar(byte)
    }

    /// `=XX` to the byte XX; `=` at the end of a line was a soft break (already joined).
    static func quotedPrintableDecoded(_ bytes: [UInt8]) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: return byte - 48
            case 65...70: return byte - 55
            case 97...102: return byte - 87
            default: return nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 61, index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// The charsets address books declare, by IANA name.
    static func encoding(named name: String) -> String.Encoding? {
        switch name.uppercased() {
        case "ISO-8859-1", "ISO8859-1", "LATIN1", "ISO_8859-1": return .isoLatin1
        case "ISO-8859-2", "ISO8859-2", "LATIN2": return .isoLatin2
        case "WINDOWS-1252", "CP1252": return .windowsCP1252
        case "WINDOWS-1250", "CP1250": return .windowsCP1250
        case "WINDOWS-1251", "CP1251": return .windowsCP1251
        case "WINDOWS-1253", "CP1253": return .windowsCP1253
        case "WINDOWS-1254", "CP1254": return .windowsCP1254
        case "SHIFT_JIS", "SHIFT-JIS", "SJIS", "CP932", "WINDOWS-31J": return .shiftJIS
        case "EUC-JP": return .japaneseEUC
        case "ISO-2022-JP": return .iso2022JP
        case "US-ASCII", "ASCII": return .ascii
        case "UTF-16": return .utf16
        case "GB18030", "GBK", "GB2312", "CP936": return CharsetGuess.cfEncoding(.GB_18030_2000)
        case "BIG5", "BIG-5", "CP950": return CharsetGuess.cfEncoding(.big5)
        case "EUC-KR", "EUCKR", "KS_C_5601-1987", "CP949": return CharsetGuess.cfEncoding(.EUC_KR)
        case "KOI8-R": return CharsetGuess.cfEncoding(.KOI8_R)
        default: return nil
        }
    }

    /// `PREF` (2.1), `TYPE=PREF` or `TYPE=…,PREF` (3.0), `PREF=n` (4.0).
    static func isPreferred(_ parameters: [String]) -> Bool {
        parameters.contains { parameter in
            let upper = parameter.uppercased()
            if upper == "PREF" || upper.hasPrefix("PREF=") { return true }
            guard upper.hasPrefix("TYPE=") else { return false }
            return upper.dropFirst(5).split(separator: ",").contains { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == "PREF" }
        }
    }

    /// A structured value's components (`;`-separated, `\;` kept), each unescaped.
    static func splitUnescaped(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for character in value {
            if escaped {
                current.append("\\")
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ";" {
                parts.append(unescape(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(unescape(current))
        return parts
    }

    static func unescape(_ value: String) -> String {
        var result = ""
        var escaped = false
        for character in value {
            if escaped {
                result.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// The physical lines of a vCard file, without their ends: "\n", "\r\n", "\r" and iOS
/// 5–6's "\r\r\n" each end one. A line longer than `maxLineBytes` keeps only its first
/// `maxLineBytes` + 1 bytes (enough to tell it is too long).
struct PhysicalLines {
    let source: VCardBytes
    let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(source: VCardBytes, maxLineBytes: Int) {
        self.source = source
        self.maxLineBytes = min(maxLineBytes, 1 << 50)
    }

    mutating func next() throws -> [UInt8]? {
        var scan = start
        while true {
            while scan < buffer.count, buffer[scan] != 10, buffer[scan] != 13 { scan += 1 }
            if scan < buffer.count, buffer[scan] == 10 || ended || buffer.count - scan >= 3 {
                let line = Array(buffer[start..<min(scan, start + maxLineBytes + 1)])
                var end = scan + 1
                if buffer[scan] == 13 {
                    if end < buffer.count, buffer[end] == 10 {
                        end += 1
                    } else if end + 1 < buffer.count, buffer[end] == 13, buffer[end + 1] == 10 {
                        end += 2
                    }
                }
                start = end
                return line
            }
            if ended {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Array(buffer[start..<min(buffer.count, start + maxLineBytes + 1)])
            }
            // No whole line in the buffer: keep at most what a line may hold, drop what
            // was read, and read on.
            let kept = maxLineBytes + 1
            if scan - start > kept, scan == buffer.count {
                buffer.removeSubrange((start + kept)..<scan)
                scan = start + kept
            }
            if start > 0, start >= buffer.count / 2 {
                buffer.removeSubrange(0..<start)
                scan -= start
                start = 0
            }
            let chunk = try source.next()
            if chunk.isEmpty { ended = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}

/// A vCard file's bytes as UTF-8, a chunk at a time: a UTF-8 byte-order mark dropped,
/// UTF-16 (with its byte-order mark or without one: Apple's Address Book writes
/// big-endian with none, told by the zero bytes of "BEGIN") decoded as it is read.
final class VCardBytes {
    static let chunkBytes = 1 << 20
    private let read: (Int) throws -> [UInt8]
    private var first = true
    private var utf16: (bigEndian: Bool, pending: [UInt8])?

    /// `read(n)` gives up to `n` more bytes, none at the end.
    init(read: @escaping (Int) throws -> [UInt8]) {
        self.read = read
    }

    convenience init(bytes: [UInt8]) {
        var offset = 0
        self.init { count in
            defer { offset = min(bytes.count, offset + count) }
            return Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    func next() throws -> [UInt8] {
        var chunk = try read(Self.chunkBytes)
        if first {
            first = false
            // The head decides: at least 4 bytes of it (or the whole file).
            while chunk.count < 4 {
                let more = try read(Self.chunkBytes)
                if more.isEmpty { break }
                chunk += more
            }
            if chunk.starts(with: [0xEF, 0xBB, 0xBF]) {
                chunk.removeFirst(3)
            } else if chunk.starts(with: [0xFE, 0xFF]) {
                utf16 = (true, []); chunk.removeFirst(2)
            } else if chunk.starts(with: [0xFF, 0xFE]) {
                utf16 = (false, []); chunk.removeFirst(2)
            } else if chunk.count >= 4, chunk[0] == 0, chunk[1] != 0, chunk[2] == 0, chunk[3] != 0 {
                utf16 = (true, [])
            } else if chunk.count >= 4, chunk[0] != 0, chunk[1] == 0, chunk[2] != 0, chunk[3] == 0 {
                utf16 = (false, [])
            }
        }
        guard let (bigEndian, pending) = utf16 else { return chunk }
        let bytes = pending + chunk
        if chunk.isEmpty {
            // A high surrogate alone at the end is U+FFFD; an odd last byte is dropped.
            utf16 = nil
            return bytes.count < 2 ? [] : Array("\u{FFFD}".utf8)
        }
        var units = [UInt16]()
        units.reserveCapacity(bytes.count / 2)
        var index = 0
        while index + 1 < bytes.count {
            let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            units.append(UInt16(high) << 8 | UInt16(low))
            index += 2
        }
        // A pair split between two chunks waits for its second half.
        if let last = units.last, (0xD800...0xDBFF).contains(last) {
            units.removeLast()
            index -= 2
        }
        utf16 = (bigEndian, Array(bytes[index...]))
        let text = Array(String(decoding: units, as: UTF16.self).utf8)
        // Nothing decodable yet (one byte, or half a pair): read on rather than end.
        return text.isEmpty ? try next() : text
    }

    /// A file, read as it is parsed.
    static func file(_ handle: FileHandle, path: String) -> VCardBytes {
        VCardBytes { count in
            do {
                return [UInt8](try handle.read(upToCount: count) ?? Data())
            } catch {
                throw ExportError(file: path, reason: "cannot read: \(error.localizedDescription)")
            }
        }
    }
}
