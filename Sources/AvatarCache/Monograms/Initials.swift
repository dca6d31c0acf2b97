/// Two-letter initials (the apps' rule: "Bob Smith Jr." BS, "Alice" AL, "J" JJ, "" ??), by grapheme cluster (Swift `Character`), so emoji
/// with ZWJ, flags, combining accents, CJK, Hangul and Devanagari stay whole.
///
/// - 2+ words: first grapheme of the first two words ("Bob Smith Jr." → "BS");
/// - one word: its first two graphemes ("Alice" → "AL");
/// - one grapheme: doubled ("J" → "JJ");
/// - empty or blank: "??".
///
/// Uppercasing uses Unicode's default case mapping, which does not depend on the
/// machine's locale; a grapheme whose uppercase form is longer (ß → SS) stays as it is.
public enum Initials {
    public static let unknown = "??"

    public static func from(displayName: String) -> String {
        fromASCII(displayName) ?? fromGraphemes(displayName)
    }

    static func fromGraphemes(_ displayName: String) -> String {
        var words = displayName.split(whereSeparator: { $0.isWhitespace || $0.isNewline })
        // A word that is only punctuation ("BMO - Dupont") is no initial, unless that is all there is.
        let lettered = words.filter { !$0.allSatisfy(\.isPunctuation) }
        if !lettered.isEmpty { words = lettered }
        guard let first = words.first else { return unknown }
        if words.count >= 2, let a = first.first, let b = words[1].first {
            return upper(a) + upper(b)
        }
        let letters = Array(first)
        if letters.count >= 2 { return upper(letters[0]) + upper(letters[1]) }
        return upper(letters[0]) + upper(letters[0])
    }

    /// Monica's rule: first letters of first and last name; without a last name, the
    /// display-name rules on the first name.
    /// Whether a name is in a script written family name first (Chinese, Japanese,
    /// Korean): its first letter is a Han ideograph, kana or Hangul.
    public static func writtenFamilyNameFirst(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first(where: { !$0.properties.isWhitespace }) else { return false }
        switch first.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0x1100...0x11FF, 0xF900...0xFAFF, 0x20000...0x2FA1F:
            return true
        default:
            return false
        }
    }

    public static func from(firstName: String?, lastName: String?) -> String {
        let given = (firstName ?? "").split(whereSeparator: \.isWhitespace).first
        let family = (lastName ?? "").split(whereSeparator: \.isWhitespace).first
        switch (given?.first, family?.first) {
        case let (a?, b?): return upper(a) + upper(b)
        case (_?, nil): return from(displayName: firstName ?? "")
        case (nil, _?): return from(displayName: lastName ?? "")
        case (nil, nil): return unknown
        }
    }

    /// The same rules for an all-ASCII name, on its bytes (an export of 100,000 users
    /// asks this 100,000 times): every ASCII byte is a grapheme of its own, except CR LF,
    /// which is white space either way. nil for any other name.
    static func fromASCII(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { bytes -> String? in
            // The first two words (their starts and lengths), among those that are not
            // punctuation alone, and among all (when every word is punctuation).
            var lettered: [(start: Int, count: Int)] = [], any: [(start: Int, count: Int)] = []
            var start = -1, allPunctuation = true
            func endWord(_ end: Int) {
                guard start >= 0 else { return }
                if any.count < 2 { any.append((start, end - start)) }
                if !allPunctuation, lettered.count < 2 { lettered.append((start, end - start)) }
                start = -1
            }
            for (index, byte) in bytes.enumerated() {
                guard byte < 0x80 else { return nil }
                if byte == 0x20 || (0x09...0x0D).contains(byte) {
                    endWord(index)
                    if lettered.count == 2 { break }
                    continue
                }
                if start < 0 { start = index; allPunctuation = true }
                if !punctuation[Int(byte)] { allPunctuation = false }
            }
            endWord(bytes.count)
            let words = lettered.isEmpty ? any : lettered
            func upper(_ byte: UInt8) -> UInt8 { (97...122).contains(byte) ? byte - 32 : byte }
            guard let first = words.first else { return unknown }
            let a = bytes[first.start]
            let b = words.count > 1 ? bytes[words[1].start] : first.count > 1 ? bytes[first.start + 1] : a
            return String(decoding: [upper(a), upper(b)], as: UTF8.self)
        }
    }

    /// ASCII bytes that are punctuation (Unicode's P categories, as `Character.isPunctuation`).
    private static let punctuation: [Bool] = (0..<128).map { Character(Unicode.Scalar(UInt8($0))).isPunctuation }

    static func upper(_ character: Character) -> String {
        let upper = String(character).uppercased()
        return upper.count == 1 ? upper : String(character)
    }
}
