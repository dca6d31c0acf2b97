import Foundation

/// What a field's values are, as a person reading them tells, whatever the field is
/// called and whatever the language: an e-mail address, a URL, a phone number, an id, a
/// date, an organisation's name, a placeholder, or text that may be a person's name.
/// `FieldChooser` judges a name or photo candidate by its values across a collection.
enum ValueEvidence {
    enum Kind: String, Sendable, CaseIterable {
        case email = "e-mail addresses"
        case url = "URLs"
        case phone = "phone numbers"
        case identifier = "ids"
        case date = "dates"
        case organisation = "organisations' names"
        case placeholder = "one-character placeholders"
        case text = "text"
    }

    /// Words an organisation's name starts or ends with (Acme Inc., Müller GmbH, 株式会社
    /// 山田, ООО «Ромашка»), compared without dots and case.
    static let organisationWords: Set<String> = [
        "inc", "incorporated", "ltd", "limited", "llc", "llp", "lp", "plc", "corp", "corporation", "company", "co",
        "gmbh", "ag", "kg", "ug", "ev", "sa", "sas", "sarl", "sl", "slu", "spa", "srl", "sapi", "ltda", "eireli", "me", "cia",
        "bv", "nv", "vof", "ab", "oy", "oyj", "as", "asa", "aps", "kk", "pty", "pvt", "sdn", "bhd", "tbk", "pt", "cv",
        "ооо", "оао", "зао", "пао", "ао", "ип", "тов", "sp", "zoo", "spzoo", "kft", "zrt", "sro", "doo",
        "foundation", "association", "university", "universidad", "universidade", "università", "université", "universität",
        "group", "holdings", "holding", "enterprises", "solutions", "technologies", "services", "consulting", "studio", "agency",
    ]
    /// Marks of an organisation written inside the name, in scripts without spaces.
    static let organisationMarks = ["株式会社", "有限会社", "合同会社", "合資会社", "一般社団法人", "公司", "有限公司", "股份有限公司", "주식회사", "(주)", "㈱", "㈲"]

    static func kind(_ raw: String) -> Kind {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 1 || ["n/a", "na", "none", "null", "nil", "undefined", "-", "--", "?", "??", "..."].contains(text.lowercased()) {
            return .placeholder
        }
        if isEmail(text) { return .email }
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("data:") || lower.hasPrefix("gs://")
            || lower.hasPrefix("www.") || lower.hasPrefix("mailto:") || lower.hasPrefix("tel:") { return .url }
        if isPhone(text) { return .phone }
        if isDate(text) { return .date }
        if isIdentifier(text) { return .identifier }
        if isOrganisation(text) { return .organisation }
        return .text
    }

    static func isEmail(_ text: String) -> Bool {
        guard let at = text.firstIndex(of: "@"), !text.contains(where: \.isWhitespace) else { return false }
        let local = text[..<at], domain = text[text.index(after: at)...]
        return !local.isEmpty && domain.contains(".") && !domain.contains("@") && !domain.hasPrefix(".") && !domain.hasSuffix(".")
    }

    /// Digits with the separators phone numbers are written with, seven digits or more.
    static func isPhone(_ text: String) -> Bool {
        var digits = 0
        for scalar in text.unicodeScalars {
            if ("0"..."9").contains(scalar) { digits += 1 } else if !" +-().".unicodeScalars.contains(scalar) { return false }
        }
        return digits >= 7 && digits <= 15 && (text.hasPrefix("+") || text.contains(" ") || text.contains("-") || text.contains("("))
    }

    /// A day or a time as systems write them (2024-03-01, 01/03/2024, 2024-03-01T10:00:00Z).
    static func isDate(_ text: String) -> Bool {
        guard text.count >= 8, text.count <= 35, text.first?.isNumber == true else { return false }
        let allowed = CharacterSet(charactersIn: "0123456789-/.:TZ+ ").union(.whitespaces)
        guard text.unicodeScalars.allSatisfy(allowed.contains) else { return false }
        let separators = text.filter { "-/.".contains($0) }.count
        return separators >= 2
    }

    /// One token of letters and digits (and `-`, `_`, `:`) that a system made: digits
    /// alone (three or more), or letters and digits mixed, sixteen characters or more
    /// (Firestore's 20, Auth's 28, a UUID's 36); a handle a person chose (`johnsmith1990`)
    /// is shorter.
    static func isIdentifier(_ text: String) -> Bool {
        guard !text.isEmpty, !text.contains(where: \.isWhitespace),
              text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_:".unicodeScalars.contains($0)) }) else { return false }
        let digits = text.filter(\.isNumber).count
        if digits == text.count { return digits >= 3 }
        return text.count >= 16 && digits > 0
    }

    static func isOrganisation(_ text: String) -> Bool {
        if organisationMarks.contains(where: text.contains) { return true }
        let words = text.split(whereSeparator: { $0.isWhitespace || $0 == "," || $0 == "«" || $0 == "»" || $0 == "\"" })
            .map { $0.lowercased().filter { $0 != "." && $0 != "(" && $0 != ")" && $0 != "&" } }.filter { !$0.isEmpty }
        guard words.count >= 2, let first = words.first, let last = words.last else { return false }
        // "S.A." and "S. A." and "sp. z o.o." end it as one mark.
        let tail2 = words.suffix(2).joined()
        let tail3 = words.suffix(3).joined()
        return organisationWords.contains(last) || organisationWords.contains(tail2) && tail2.count <= 4
            || tail3 == "spzoo" || ["ооо", "оао", "зао", "пао", "ао", "ип", "тов"].contains(first)
    }

    /// What a candidate's values are across the documents that have it: the kind most of
    /// them are (when it is not text), or that one value is shared by (nearly) every
    /// document; nil when they may be people's names.
    struct Verdict: Sendable, Equatable, CustomStringConvertible {
        var documents: Int
        var kind: Kind?
        var kindCount = 0
        var shared: (value: String, count: Int)?

        static func == (a: Verdict, b: Verdict) -> Bool { a.description == b.description }

        var isName: Bool { kind == nil && shared == nil }

        var description: String {
            if let kind { return "\(kindCount) of \(documents) values are \(kind.rawValue)" }
            if let shared { return "one value (\"\(abbreviatedValue(shared.value))\") on \(shared.count) of \(documents) documents" }
            return "names"
        }
    }

    static func abbreviatedValue(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(39)) + "…" : text
    }

    /// Judges the texts of a name candidate (one per document that has it) in a
    /// collection of `collectionSize` sampled documents.
    static func nameVerdict(_ texts: [String], collectionSize: Int) -> Verdict {
        var verdict = Verdict(documents: texts.count)
        guard !texts.isEmpty else { return verdict }
        var counts: [Kind: Int] = [:]
        for text in texts { counts[kind(text), default: 0] += 1 }
        if let (kind, count) = counts.filter({ $0.key != .text }).max(by: { $0.value < $1.value }), count * 2 > texts.count {
            verdict.kind = kind
            verdict.kindCount = count
            return verdict
        }
        // One value on (nearly) every document of a collection of several: a company's,
        // a role's, a default's, not each person's name.
        var values: [String: Int] = [:]
        for text in texts { values[text.trimmingCharacters(in: .whitespaces).lowercased(), default: 0] += 1 }
        if texts.count >= 4, let (value, count) = values.max(by: { $0.value < $1.value }), count * 10 >= max(collectionSize, texts.count) * 9 {
            verdict.shared = (texts.first { $0.trimmingCharacters(in: .whitespaces).lowercased() == value } ?? value, count)
        }
        return verdict
    }

    /// Text that reads as a person's name, whatever its script: one to five words of
    /// letters (with the marks, hyphens, apostrophes and dots names carry), no digits, and
    /// none of the kinds above.
    static func looksLikePersonName(_ raw: String) -> Bool {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count >= 2, text.count <= 60, kind(text) == .text else { return false }
        let words = text.split(whereSeparator: \.isWhitespace)
        guard (1...5).contains(words.count) else { return false }
        let allowed = CharacterSet.letters.union(.nonBaseCharacters).union(CharacterSet(charactersIn: "-'’.·・"))
        guard words.allSatisfy({ $0.unicodeScalars.allSatisfy(allowed.contains) }) else { return false }
        // Cased scripts: every word starts with a capital (or a particle: de, van, al-).
        let particles: Set<String> = ["de", "da", "do", "dos", "das", "del", "della", "di", "van", "von", "der", "den", "la", "le", "du", "bin", "binti", "al", "el", "y", "e", "ter", "zu"]
        return words.allSatisfy { word in
            guard let first = word.first else { return false }
            return !first.isCased || first.isUppercase || particles.contains(word.lowercased()) || word.hasPrefix("al-") || word.hasPrefix("d'")
        }
    }

    /// An http(s) URL of a web page, not of an image: no image extension, no image host,
    /// and no word of a picture in it (`https://twitter.com/ada`, `https://example.com/u/ada`).
    static func looksLikePage(_ raw: String) -> Bool {
        let lower = raw.trimmingCharacters(in: .whitespaces).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), !looksLikePhoto(raw) else { return false }
        let pictureWords = ["photo", "avatar", "image", "img", "pic", "picture", "profile", "media", "static", "upload", "file", "thumb",
                            "asset", "storage", "blob", "content", "download", "gravatar", "icon", "alt=media", "foto", "bild", "imagen"]
        return !pictureWords.contains { lower.contains($0) }
    }

    /// A value that is a photo: an image's URL (an image extension, an image host's or
    /// Storage's download URL), a `gs://` or Storage path to an image, a `data:image` URI.
    /// A web page or a bare word is not.
    static func looksLikePhoto(_ raw: String) -> Bool {
        let text = raw.trimmingCharacters(in: .whitespaces)
        let lower = text.lowercased()
        if lower.hasPrefix("data:image/") { return true }
        let path = lower.split(separator: "?", maxSplits: 1).first.map(String.init) ?? lower
        let imageExtensions = [".jpg", ".jpeg", ".png", ".webp", ".gif", ".heic", ".heif", ".avif", ".bmp"]
        let hasImageExtension = imageExtensions.contains { path.hasSuffix($0) } || imageExtensions.contains { path.removingPercentEncoding?.hasSuffix($0) ?? false }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            let imageHosts = ["firebasestorage.googleapis.com", "storage.googleapis.com", "googleusercontent.com", "gravatar.com/avatar",
                              "graph.facebook.com", "pbs.twimg.com", "avatars.githubusercontent.com", "cloudinary.com", "imgur.com",
                              "ui-avatars.com", "pravatar.cc", "randomuser.me/api/portraits", "unsplash.com/photo", "s3.amazonaws.com", "cdn"]
            return hasImageExtension || imageHosts.contains { lower.contains($0) }
        }
        if lower.hasPrefix("gs://") { return true }
        // A Storage path: folders and an image file (`avatars/u1/photo.jpg`).
        return hasImageExtension && text.contains("/") && !text.contains(where: \.isWhitespace)
    }
}
