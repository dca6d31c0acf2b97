/// The PRD's two-letter initials, by grapheme cluster (Swift `Character`), so emoji
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
        let words = displayName.split(whereSeparator: { $0.isWhitespace || $0.isNewline })
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

    static func upper(_ character: Character) -> String {
        let upper = String(character).uppercased()
        return upper.count == 1 ? upper : String(character)
    }
}
