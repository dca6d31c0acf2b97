import Foundation

/// Reads Jami profiles: vCard files (`.vcf`, one or several cards each) or a folder of
/// them. `FN` (else `N`) is the name; `PHOTO` is the photo, inline, in the vCard 3.0
/// form (`PHOTO;ENCODING=b;TYPE=JPEG:<base64>`, folded lines), the 2.1 form
/// (`PHOTO;JPEG;ENCODING=BASE64:<base64>`, continuation lines up to a blank line) or a
/// 4.0 `data:` URI. No download: the cache key is SHA-256 of the photo bytes (seed 000).
///
/// A name that is really an account id (40 hex characters), an empty name, or a group
/// card gets a glyph instead of letters (seed 000). Broken base64 or a card without
/// `END:VCARD` is a reported bad record; the person still gets a monogram where the
/// card is otherwise whole.
public struct JamiReader: ExportReader {
    public let path: String
    public let limits: ReaderLimits

    public init(path: String, limits: ReaderLimits = ReaderLimits()) {
        self.path = path
        self.limits = limits
    }

    public func read(_ body: (ExportItem) throws -> Void) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExportError(file: path, reason: "no such file or folder")
        }
        if isDirectory.boolValue {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: path)
                    .filter { $0.lowercased().hasSuffix(".vcf") }.sorted()
            } catch {
                throw ExportError(file: path, reason: "cannot list the folder: \(error.localizedDescription)")
            }
            if names.isEmpty { throw ExportError(file: path, reason: "the folder holds no .vcf file") }
            for name in names {
                try readFile((path as NSString).appendingPathComponent(name), body)
            }
        } else {
            try readFile(path, body)
        }
    }

    private func readFile(_ file: String, _ body: (ExportItem) throws -> Void) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file)
        let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        let maxFileBytes = limits.maxRecordBytes * 16
        guard size <= maxFileBytes else {
            try body(.bad(BadRecord(file: file, index: 1, line: 1, reason: "file is \(size) bytes, over the \(maxFileBytes)-byte limit for a vCard file")))
            return
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ExportError(file: file, reason: "cannot read")
        }
        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        var cards = VCardParser(text: String(decoding: data, as: UTF8.self), maxCardBytes: limits.maxRecordBytes).cards()
        if cards.isEmpty {
            try body(.bad(BadRecord(file: file, index: 1, line: 1, reason: "no BEGIN:VCARD in the file")))
            return
        }
        let several = cards.count > 1
        for index in cards.indices {
            cards[index].fallbackID = several ? "\(stem)#\(index + 1)" : stem
            try emit(cards[index], index: index + 1, file: file, body)
        }
    }

    private func emit(_ card: VCard, index: Int, file: String, _ body: (ExportItem) throws -> Void) throws {
        func bad(_ reason: String) -> ExportItem {
            .bad(BadRecord(file: file, index: index, line: card.line, reason: reason))
        }
        if let problem = card.problem {
            try body(bad(problem))
            return
        }
        let id = card.uid ?? card.fallbackID
        var name = card.formattedName ?? ""
        if name.isEmpty, let structured = card.structuredName { name = structured }
        name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        let isAccountID = name.count == 40 && name.allSatisfy(\.isHexDigit)
        let glyph: MonogramGlyph? = card.isGroup ? .group : (name.isEmpty || isAccountID ? .person : nil)
        var profile = Profile(id: id, displayName: name, initials: glyph == nil ? nil : "", glyph: glyph)
        switch card.photo {
        case .none:
            break
        case .bytes(let base64)?:
            guard base64.utf8.count <= limits.maxInlineBytes / 3 * 4 + 4 else {
                try body(bad("PHOTO is larger than \(limits.maxInlineBytes) bytes: monogram used"))
                break
            }
            if let decoded = Data(base64Encoded: base64), !decoded.isEmpty {
                profile.photo = .inline(InlinePhoto(bytes: [UInt8](decoded)))
            } else {
                try body(bad("PHOTO is not valid base64: monogram used"))
            }
        case .uri(let uri)?:
            if uri.lowercased().hasPrefix("data:") {
                do {
                    profile.photo = .inline(InlinePhoto(bytes: try DataURL.decode(uri, maxBytes: limits.maxInlineBytes)))
                } catch let error as DataURL.Error {
                    try body(bad("PHOTO: \(error.description): monogram used"))
                }
            } else {
                try body(bad("PHOTO is a link, not inline data (Jami profiles carry their photo): monogram used"))
            }
        }
        try body(.profile(profile))
    }
}

/// One parsed vCard.
struct VCard {
    enum Photo { case bytes(String), uri(String) }

    var line: Int
    var uid: String?
    var formattedName: String?
    var structuredName: String?
    var photo: Photo?
    var isGroup = false
    /// Set when the card cannot be used (no END:VCARD, too large).
    var problem: String?
    var fallbackID = ""
}

/// A tolerant vCard 2.1/3.0/4.0 parser: unfolds lines, reads the properties we need.
struct VCardParser {
    let text: String
    let maxCardBytes: Int

    func cards() -> [VCard] {
        var cards: [VCard] = []
        var current: VCard?
        var currentBytes = 0
        for (line, number) in logicalLines() {
            let (name, parameters, value) = Self.split(line)
            if name == "BEGIN", value.uppercased() == "VCARD" {
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
            case "END" where value.uppercased() == "VCARD":
                cards.append(card)
                current = nil
                continue
            case "FN": card.formattedName = Self.unescape(value)
            case "N":
                let parts = value.split(separator: ";", omittingEmptySubsequences: false).map { Self.unescape(String($0)) }
                let given = parts.count > 1 ? parts[1] : "", family = parts.first ?? ""
                card.structuredName = [given, family].filter { !$0.isEmpty }.joined(separator: " ")
            case "UID", "X-JAMI-ID", "X-RINGACCOUNTID":
                if card.uid == nil || name == "UID" {
                    let uid = value.trimmingCharacters(in: .whitespaces)
                    if !uid.isEmpty { card.uid = uid }
                }
            case "KIND", "X-ADDRESSBOOKSERVER-KIND":
                if value.lowercased() == "group" { card.isGroup = true }
            case "X-JAMI-GROUP":
                card.isGroup = true
            case "PHOTO":
                let upper = parameters.map { $0.uppercased() }
                let isBase64 = upper.contains { $0 == "ENCODING=B" || $0 == "ENCODING=BASE64" || $0 == "BASE64" }
                card.photo = isBase64 ? .bytes(value.filter { !$0.isWhitespace }) : .uri(value.trimmingCharacters(in: .whitespaces))
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

    /// Unfolded lines with the number of the line each starts on. A line starting with
    /// a space or tab continues the previous one (RFC 2425/6350 folding); in a 2.1
    /// base64 PHOTO, lines without a colon continue it up to a blank line.
    func logicalLines() -> [(String, Int)] {
        var result: [(String, Int)] = []
        var current: String?
        var start = 0
        var inBase64Block = false
        var number = 0
        // "\r\n" is one Character in Swift: split on it as well as on "\n" and "\r".
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            number += 1
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
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
