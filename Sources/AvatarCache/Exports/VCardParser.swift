import Foundation

/// A tolerant vCard 2.1/3.0/4.0 parser: unfolds lines, reads the properties we need.
struct VCardParser {
    /// The file as text: UTF-8 when it is valid UTF-8, else one character per byte
    /// (ISO-8859-1), so that each value's bytes can be decoded as its `CHARSET` says.
    let text: String
    let bytesAsLatin1: Bool
    let maxCardBytes: Int

    init(bytes: [UInt8], maxCardBytes: Int) {
        var bytes = Self.withoutByteOrderMark(bytes)
        // iOS 5–6 end lines with "\r\r\n": one line end, not a blank line between two.
        if bytes.count > 2 {
            var write = 0, read = 0
            while read < bytes.count {
                if bytes[read] == 13, read + 2 < bytes.count, bytes[read + 1] == 13, bytes[read + 2] == 10 {
                    bytes[write] = 13; bytes[write + 1] = 10
                    write += 2; read += 3
                    continue
                }
                bytes[write] = bytes[read]
                write += 1; read += 1
            }
            bytes.removeLast(bytes.count - write)
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            self.text = text
            bytesAsLatin1 = false
        } else {
            self.text = String(bytes: bytes, encoding: .isoLatin1) ?? String(decoding: bytes, as: UTF8.self)
            bytesAsLatin1 = true
        }
        self.maxCardBytes = maxCardBytes
    }

    /// A file's bytes as UTF-8 (or its own 8-bit charset): UTF-16 is decoded, with its
    /// byte-order mark or without one (Apple's Address Book writes big-endian with none),
    /// told by the zero bytes of "BEGIN"; a UTF-8 byte-order mark is dropped.
    static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        let encoding: String.Encoding?
        var body = bytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return Array(bytes.dropFirst(3))
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            encoding = .utf16BigEndian; body = bytes.dropFirst(2)
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16LittleEndian; body = bytes.dropFirst(2)
        } else if bytes.count >= 4, bytes[0] == 0, bytes[1] != 0, bytes[2] == 0, bytes[3] != 0 {
            encoding = .utf16BigEndian
        } else if bytes.count >= 4, bytes[0] != 0, bytes[1] == 0, bytes[2] != 0, bytes[3] == 0 {
            encoding = .utf16LittleEndian
        } else {
            return bytes
        }
        // An even number of bytes (a head read from a file may end in the middle of one).
        body = body.prefix(body.count & ~1)
        guard let encoding, let text = String(data: Data(body), encoding: encoding) else { return bytes }
        return Array(text.utf8)
    }

    func cards() -> [VCard] {
        var cards: [VCard] = []
        var current: VCard?
        var currentBytes = 0
        for (line, number) in logicalLines() {
            let (name, parameters, value) = Self.split(line)
            if name == "BEGIN", value.trimmingCharacters(in: .whitespaces).uppercased() == "VCARD" {
                if var open = current {
                    open.problem = "no END:VCARD before the next BEGIN:VCARD"
                    cards.append(open)
                }
                current = VCard(line: number)
                currentBytes = 0
                continue
            }
            guard var card = current else { continue }
            currentBytes += line.utf8.count
            if currentBytes > maxCardBytes, card.problem == nil {
                card.problem = "vCard is larger than \(maxCardBytes) bytes"
            }
            switch name {
            case "END" where value.trimmingCharacters(in: .whitespaces).uppercased() == "VCARD":
                cards.append(card)
                current = nil
                continue
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
                if value.trimmingCharacters(in: .whitespaces).uppercased() == "COMPANY" { card.isCompany = true }
            case "UID", "X-JAMI-ID", "X-RINGACCOUNTID":
                if card.uid == nil || name == "UID" {
                    let uid = value.trimmingCharacters(in: .whitespaces)
                    if !uid.isEmpty { card.uid = uid }
                }
            case "KIND", "X-ADDRESSBOOKSERVER-KIND":
                switch value.trimmingCharacters(in: .whitespaces).lowercased() {
                case "group": card.isGroup = true
                case "org", "organization": card.isCompany = true
                default: break
                }
            case "X-JAMI-GROUP":
                card.isGroup = true
            case "PHOTO":
                let upper = parameters.map { $0.uppercased() }
                let isBase64 = upper.contains { $0 == "ENCODING=B" || $0 == "ENCODING=BASE64" || $0 == "BASE64" }
                let trimmedValue = value.trimmingCharacters(in: .whitespaces)
                if trimmedValue.lowercased().hasPrefix("data:") {
                    // A data: URI, also where ENCODING=b says base64 (both forms at once), and
                    // with vCard 3's text escaping (Nextcloud writes "base64\,"): no
                    // backslash belongs in a data URI.
                    card.photo = .uri(Self.unescape(trimmedValue).filter { !$0.isWhitespace })
                } else {
                    card.photo = isBase64 ? .bytes(value.filter { !$0.isWhitespace }) : .uri(trimmedValue)
                }
            default: break
            }
            current = card
        }
        if var open = current {
            open.problem = "the file ends before END:VCARD (truncated?)"
            cards.append(open)
        }
        return cards
    }

    /// A value's text: its bytes, quoted-printable decoded when `ENCODING=QUOTED-PRINTABLE`
    /// (2.1), read in the declared `CHARSET` (default UTF-8). What cannot be decoded is
    /// reported in `problems` and shown with U+FFFD.
    func decode(_ value: String, _ parameters: [String], property: String, problems: inout [String]) -> String {
        let upper = parameters.map { $0.uppercased() }
        let quotedPrintable = upper.contains { $0 == "ENCODING=QUOTED-PRINTABLE" || $0 == "QUOTED-PRINTABLE" }
        let charset = upper.first { $0.hasPrefix("CHARSET=") }.map { String($0.dropFirst(8)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        guard quotedPrintable || charset != nil || bytesAsLatin1 else { return value }
        var bytes = bytesAsLatin1 ? value.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) } : Array(value.utf8)
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
        problems.append("\(property): not valid UTF-8 and no CHARSET given: shown with U+FFFD")
        return String(decoding: bytes, as: UTF8.self)
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

    /// Unfolded lines with the number of the line each starts on. A line starting with
    /// a space or tab continues the previous one (RFC 2425/6350 folding); in a 2.1
    /// base64 PHOTO, lines without a colon continue it up to a blank line; in a 2.1
    /// quoted-printable value, a line ending in `=` continues on the next.
    func logicalLines() -> [(String, Int)] {
        var result: [(String, Int)] = []
        var current: String?
        var start = 0
        var inBase64Block = false
        var inQuotedPrintable = false
        var number = 0
        // "\r\n" is one Character in Swift: split on it as well as on "\n" and "\r".
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            number += 1
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if inQuotedPrintable, current?.hasSuffix("=") == true {
                current!.removeLast()
                current! += line
                continue
            }
            if let first = line.first, first == " " || first == "\t", current != nil {
                current! += line.dropFirst()
                continue
            }
            if inBase64Block, !line.isEmpty, !line.contains(":"), current != nil {
                current! += line
                continue
            }
            if let finished = current { result.append((finished, start)) }
            current = line.isEmpty ? nil : String(line)
            start = number
            let upper = line.uppercased()
            inBase64Block = upper.hasPrefix("PHOTO") && upper.contains("BASE64")
            inQuotedPrintable = upper.split(separator: ":", maxSplits: 1).first?.contains("QUOTED-PRINTABLE") == true
        }
        if let finished = current { result.append((finished, start)) }
        return result
    }

    /// NAME (without a group prefix), parameters, value.
    static func split(_ line: String) -> (String, [String], String) {
        guard let colon = line.firstIndex(of: ":") else { return ("", [], "") }
        let head = line[..<colon]
        var parts = head.split(separator: ";").map(String.init)
        var name = parts.isEmpty ? "" : parts.removeFirst().uppercased()
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        return (name, parts, String(line[line.index(after: colon)...]))
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
