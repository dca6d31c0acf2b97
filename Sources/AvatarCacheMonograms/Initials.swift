import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        let name = nameItself(displayName)
        return fromSimpleScalars(name) ?? fromGraphemes(name)
    }

    // MARK: The name itself, not its decorations

    /// The name as its initials count it (the apps' rule, counted in the name itself): a
    /// leading title ("Mr.", "Dr.", "Prof.", "Mme", "Herr", "Sr.") and trailing suffixes and
    /// degrees ("Jr.", "III", "PhD", "B.Math", "M.Sc") set aside, and "Family, Given" (one
    /// comma, two parts that are names) read as "Given Family". A name that is nothing but
    /// decorations stays as it is.
    ///
    /// "Mr. A N. Example, B.Math, M.Sc" → "A N. Example" (AN); "Doe, John" → "John Doe"
    /// (JD); "Bob Smith Jr." → "Bob Smith" (BS); "Dr. Who" → "Who" (WH).
    public static func nameItself(_ displayName: String) -> String {
        // Most names have no comma and start and end with a word that decorates nothing.
        guard hasComma(displayName) || hasDecoration(displayName) else { return displayName }
        let inCapitals = displayName == displayName.uppercased()
        var parts = displayName.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        // Trailing parts that are all suffixes and degrees: ", PhD", ", B.Math, M.Sc".
        while parts.count > 1, let last = parts.last, isDecorationOnly(last, leading: false, inCapitals: inCapitals) || last.isEmpty {
            parts.removeLast()
        }
        // Each part without its own decorations ("Dr. Smith, John", "Smith, John Jr.").
        parts = parts.map { withoutDecorations($0, inCapitals: inCapitals) }
        var name: String
        if parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !isDecorationOnly(parts[1], leading: true, inCapitals: inCapitals) {
            // "Family, Given": one comma, two names.
            name = parts[1] + " " + parts[0]
        } else {
            name = parts.joined(separator: ", ")
        }
        name = withoutDecorations(name, inCapitals: inCapitals)
        return name.isEmpty ? displayName : name
    }

    /// `text`'s words without its leading titles and trailing suffixes (one word stays).
    static func withoutDecorations(_ text: String, inCapitals: Bool) -> String {
        var words = text.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        while words.count > 1, isTitle(words[0]) { words.removeFirst() }
        while words.count > 1, isSuffix(words[words.count - 1], inCapitals: inCapitals) { words.removeLast() }
        return words.joined(separator: " ")
    }

    /// Whether `name` holds a comma as Foundation's `contains(",")` finds one, asked of
    /// Foundation only when a comma's byte is there (most names have none, and every name
    /// of a million-profile export passes here).
    static func hasComma(_ name: String) -> Bool {
        name.utf8.contains(UInt8(ascii: ",")) && name.contains(",")
    }

    /// Whether the first or last word may be a title or a suffix (a quick look).
    static func hasDecoration(_ name: String) -> Bool {
        hasDecorationBySimpleScalars(name) ?? hasDecorationByGraphemes(name)
    }

    /// `hasDecoration` for any name, grapheme by grapheme.
    static func hasDecorationByGraphemes(_ name: String) -> Bool {
        // The first and last words without splitting the whole name (every name of a
        // million-profile export passes here).
        guard let firstBlank = name.firstIndex(where: { $0.isWhitespace }),
              let lastBlank = name.lastIndex(where: { $0.isWhitespace }) else { return false }
        let first = name[..<firstBlank], last = name[name.index(after: lastBlank)...]
        guard !first.isEmpty, !last.isEmpty else {
            // Blanks around the name: the words as split.
            let words = name.split(whereSeparator: { $0.isWhitespace })
            guard words.count > 1 else { return false }
            return isTitle(String(words[0])) || isSuffix(String(words[words.count - 1]), inCapitals: name == name.uppercased())
        }
        // Titles and suffixes are short: a long word is neither, whatever its case.
        if first.count <= 9, isTitle(String(first)) { return true }
        return last.count <= 9 && isSuffix(String(last), inCapitals: name == name.uppercased())
    }

    /// `hasDecoration` for a name of simple scalars (`SimpleScalars`: each its own
    /// grapheme) whose first and last words have a blank between them (nil for any other
    /// name): the words are those `hasDecoration` finds, found without walking graphemes.
    /// Whether the name is in capitals is asked only of a last word that is a suffix only
    /// in capitals.
    static func hasDecorationBySimpleScalars(_ name: String) -> Bool? {
        let scalars = name.unicodeScalars
        var firstBlank: String.Index?, lastBlank = scalars.startIndex
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let traits = SimpleScalars.traits(scalars[index])
            guard traits.contains(.simple) else { return nil }
            if traits.contains(.blank) {
                if firstBlank == nil { firstBlank = index }
                lastBlank = index
            }
            scalars.formIndex(after: &index)
        }
        guard let firstBlank else { return false }
        let afterLastBlank = scalars.index(after: lastBlank)
        guard firstBlank > scalars.startIndex, afterLastBlank < scalars.endIndex else { return nil }
        let first = scalars[..<firstBlank], last = scalars[afterLastBlank...]
        if first.count <= 9, mayBeDecoration(first) != false, isTitle(String(first)) { return true }
        guard last.count <= 9, mayBeDecoration(last) != false else { return false }
        return isSuffix(String(last), inCapitals: scalars.allSatisfy { SimpleScalars.traits($0).contains(.unchangedByUpper) })
    }

    /// Whether an ASCII word may be a title, a suffix or a degree, asked before the lists
    /// are (most first and last words are neither, and are told so without a string made):
    /// false when its key (lower case, without dots, commas and semicolons), packed into 8
    /// bytes, is none of the lists' keys; nil for a word that is not ASCII or whose key is
    /// longer (the lists decide).
    static func mayBeDecoration(_ word: Substring.UnicodeScalarView) -> Bool? {
        guard let key = packedKey(word) else { return nil }
        return decorationKeys.contains(key)
    }

    /// An ASCII word's key in a `UInt64`, its bytes from the lowest; nil when it does not fit.
    static func packedKey<Scalars: Sequence>(_ word: Scalars) -> UInt64? where Scalars.Element == Unicode.Scalar {
        var key: UInt64 = 0, shift: UInt64 = 0
        for scalar in word {
            guard scalar.isASCII else { return nil }
            var byte = UInt8(scalar.value)
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: ";") { continue }
            guard shift < 64 else { return nil }
            if (65...90).contains(byte) { byte += 32 }
            key |= UInt64(byte) << shift
            shift += 8
        }
        return key
    }

    /// The lists' ASCII keys that fit in 8 bytes, packed (`packedKey`).
    static let decorationKeys: Set<UInt64> = Set(titles.union(titlesWithDot).union(suffixes).union(suffixesInCapitals).compactMap {
        packedKey($0.unicodeScalars)
    })

    /// A part of a name that is only titles (leading) or only suffixes and degrees.
    static func isDecorationOnly(_ part: String, leading: Bool, inCapitals: Bool = false) -> Bool {
        let words = part.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        return !words.isEmpty && words.allSatisfy { leading ? isTitle($0) : isSuffix($0, inCapitals: inCapitals) }
    }

    /// A word as the lists hold it: lower case, without dots ("Ph.D." → "phd"). An ASCII
    /// word on its bytes (each a grapheme, lowered as Unicode lowers it).
    static func plain(_ word: String) -> String {
        var word = word
        let ascii = word.withUTF8 { bytes -> String? in
            guard bytes.count <= 32, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { buffer in
                var count = 0
                for byte in bytes where byte != UInt8(ascii: ".") {
                    buffer[count] = (65...90).contains(byte) ? byte + 32 : byte
                    count += 1
                }
                return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
            }
        }
        return ascii ?? word.lowercased().filter { $0 != "." }
    }

    /// Titles written before a name, in the languages of the tests' address books: always
    /// titles…
    static let titles: Set<String> = ["mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "rev", "mme", "mlle", "herr", "frau",
                                      "shri", "smt", "sir", "dame", "dott", "dottssa", "profssa", "sra", "srta", "sigra", "avv"]
    /// …and words that are titles only with their dot ("Sr. García", "Ing. Novák", "Fr.
    /// Brown": "Sr" is a suffix at the end, "Ing" a family name; "M." is as often an
    /// initial as monsieur, and stays).
    static let titlesWithDot: Set<String> = ["sr", "fr", "hr", "dña", "ing", "mgr", "drs", "ir", "sig", "capt", "col", "lt", "sgt", "gen", "rt", "hon"]

    static func isTitle(_ word: String) -> Bool {
        let key = plain(word)
        return titles.contains(key) || (word.hasSuffix(".") && titlesWithDot.contains(key))
    }

    /// Suffixes and degrees written after a name: always…
    static let suffixes: Set<String> = ["jr", "sr", "phd", "esq", "msc", "bsc", "bmath", "mmath", "mba", "dphil", "mphil", "beng", "meng",
                                        "llb", "llm", "dds", "dvm", "frcs", "cpa", "facs", "mbbs", "dipl",
                                        // A company's: "Acme, Inc." is Acme.
                                        "inc", "ltd", "llc", "gmbh", "corp", "plc"]
    /// …and ones that are also words or names, taken only in capitals or with dots
    /// ("MA", "M.A." but not Jack Ma; "II" but not a name "Ii").
    static let suffixesInCapitals: Set<String> = ["ii", "iii", "iv", "md", "ma", "ba", "rn", "jd", "pe", "obe", "mbe", "cbe", "kbe", "jun", "sen",
                                                  "co", "ag", "sa", "bv", "ab", "oy", "kg"]

    /// `inCapitals`: the whole name is written in capitals (an old phone's "JACK MA"), so
    /// capitals tell nothing: only the dotted forms count then.
    /// `inCapitals` is asked only of a word that is a suffix only in capitals.
    static func isSuffix(_ word: String, inCapitals: @autoclosure () -> Bool = false) -> Bool {
        // Trimmed only when there is something to trim.
        let trimmed = word.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ";") }
            ? word.trimming { $0 == "," || $0 == ";" } : word
        let key = plain(trimmed)
        if suffixes.contains(key) { return true }
        guard suffixesInCapitals.contains(key) else { return false }
        return trimmed.contains(".") || (!inCapitals() && trimmed == trimmed.uppercased())
    }

    /// The rules by grapheme: the words are split at white space; punctuation and symbols
    /// around a word are not its letters ("Anna (Kyiv)" → AK, "BMO - Dupont" → BD); emoji
    /// are (other symbols). A name of nothing else keeps them. One pass that stops at the
    /// second word's first letter (what `fromSimpleScalars` does by scalar).
    static func fromGraphemes(_ displayName: String) -> String {
        // The first two letters of the first word that has any, the first of the second.
        var letters: [Character] = [], second: Character?, lettered = 0, wordHasLetter = false
        // The same of every character, for a name whose words have no letter.
        var any: [Character] = [], anySecond: Character?, words = 0, inWord = false
        for character in displayName {
            if character.isWhitespace || character.isNewline {
                inWord = false
                continue
            }
            if !inWord {
                inWord = true
                wordHasLetter = false
                words += 1
            }
            if words == 1, any.count < 2 { any.append(character) } else if words == 2, anySecond == nil { anySecond = character }
            guard !isIgnorable(character) else { continue }
            if !wordHasLetter {
                wordHasLetter = true
                lettered += 1
            }
            if lettered == 1 {
                if letters.count < 2 { letters.append(character) }
            } else {
                second = character
                break
            }
        }
        if let first = letters.first {
            return upper(first) + upper(second ?? (letters.count > 1 ? letters[1] : first))
        }
        guard let first = any.first else { return unknown }
        return upper(first) + upper(anySecond ?? (any.count > 1 ? any[1] : first))
    }

    /// Punctuation, and math, currency and modifier symbols (`=`, `$`, `^`): not letters
    /// a monogram shows. Emoji are other symbols, and stay.
    static func isIgnorable(_ character: Character) -> Bool {
        if character.isPunctuation || character.isMathSymbol || character.isCurrencySymbol { return true }
        guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1 else { return false }
        return scalar.properties.generalCategory == .modifierSymbol
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

    /// The same rules for a name of simple scalars (`SimpleScalars`: Latin, Greek and
    /// Cyrillic without combining marks, each scalar a grapheme of its own; an export of a
    /// million users asks this a million times), scalar by scalar, each scalar's traits
    /// and capital from a table. nil for any other name.
    static func fromSimpleScalars(_ name: String) -> String? {
        // The first two letters (scalars that are not punctuation or symbols) of the first
        // word that has any, and the first of the second; every scalar when no word has one.
        var letters: (Unicode.Scalar?, Unicode.Scalar?) = (nil, nil), second: Unicode.Scalar?, words = 0, inWord = false
        var anyFirst: Unicode.Scalar?, anyFirstSecond: Unicode.Scalar?, anySecond: Unicode.Scalar?, anyWords = 0, anyInWord = false
        for scalar in name.unicodeScalars {
            let traits = SimpleScalars.traits(scalar)
            guard traits.contains(.simple) else { return nil }
            // The scalar after the second word's first letter is simple too: that letter is
            // one grapheme (a combining mark would have made it longer).
            if second != nil { break }
            if traits.contains(.blank) { inWord = false; anyInWord = false; continue }
            if !anyInWord { anyInWord = true; anyWords += 1 }
            if anyWords == 1 { if anyFirst == nil { anyFirst = scalar } else if anyFirstSecond == nil { anyFirstSecond = scalar } }
            else if anyWords == 2, anySecond == nil { anySecond = scalar }
            guard !traits.contains(.ignorable) else { continue }
            if !inWord { inWord = true; words += 1 }
            if words == 1 {
                if letters.0 == nil { letters.0 = scalar } else if letters.1 == nil { letters.1 = scalar }
            } else if second == nil {
                second = scalar
            }
        }
        if let a = letters.0 {
            return SimpleScalars.upper(a) + SimpleScalars.upper(second ?? letters.1 ?? a)
        }
        guard let a = anyFirst else { return unknown }
        return SimpleScalars.upper(a) + SimpleScalars.upper(anySecond ?? anyFirstSecond ?? a)
    }

    static func upper(_ character: Character) -> String {
        let upper = String(character).uppercased()
        return upper.count == 1 ? upper : String(character)
    }
}

/// The scalars each of which is a grapheme of its own whatever stands beside it: Latin
/// (U+0000–U+02FF: ASCII, Latin-1, Latin Extended-A and B, IPA, spacing modifier
/// letters), Greek (U+0370–U+03FF) and Cyrillic (U+0400–U+0482, U+048A–U+052F), that is
/// the blocks up to Armenian without the combining marks (U+0300–U+036F, U+0483–U+0489).
/// None of them extends, joins or prepends to a neighbour (CR LF, one grapheme, is white
/// space either way), so a name of them is walked scalar by scalar, each scalar's
/// `Character` traits taken from a table made by asking `Character` once.
enum SimpleScalars {
    struct Traits: OptionSet {
        let rawValue: UInt8
        /// A grapheme of its own.
        static let simple = Traits(rawValue: 1)
        /// White space or a line break (`Character.isWhitespace || isNewline`).
        static let blank = Traits(rawValue: 2)
        /// No letter a monogram shows (`Initials.isIgnorable`).
        static let ignorable = Traits(rawValue: 4)
        /// Its own capital (`uppercased()` gives it back).
        static let unchangedByUpper = Traits(rawValue: 8)
    }

    /// The first scalar past the table.
    static let end: UInt32 = 0x530

    static func isSimple(_ value: UInt32) -> Bool {
        value < 0x300 || (0x370..<0x483).contains(value) || (0x48A..<end).contains(value)
    }

    private static let table: [(traits: Traits, upper: String)] = (0..<end).map { value in
        guard isSimple(value), let scalar = Unicode.Scalar(value) else { return ([], "") }
        let character = Character(scalar)
        var traits: Traits = .simple
        if character.isWhitespace || character.isNewline { traits.insert(.blank) }
        if Initials.isIgnorable(character) { traits.insert(.ignorable) }
        if String(character).uppercased() == String(character) { traits.insert(.unchangedByUpper) }
        return (traits, Initials.upper(character))
    }

    /// `scalar`'s traits; none (not `.simple`) past the table.
    @inline(__always)
    static func traits(_ scalar: Unicode.Scalar) -> Traits {
        scalar.value < end ? table[Int(scalar.value)].traits : []
    }

    /// `Initials.upper` of a simple scalar.
    static func upper(_ scalar: Unicode.Scalar) -> String {
        table[Int(scalar.value)].upper
    }
}
