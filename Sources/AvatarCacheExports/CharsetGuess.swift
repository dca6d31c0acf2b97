import Foundation
#if canImport(CoreFoundation)
import CoreFoundation
#endif

/// The charset of text that is not UTF-8 and says none, as address books wrote it: each
/// legacy charset of the tests' writers tried, and the one whose text reads as its own
/// script chosen. A decoding is clean when every non-ASCII character is a letter of the
/// scripts that charset is for (kana and kanji for Shift_JIS, Hangul for EUC-KR, Cyrillic
/// for KOI8-R, Latin for windows-1252) and no word mixes them with ASCII letters
/// ("M黮ler" is "Müller" read as GB18030: not clean); of the clean ones, the one with the
/// most characters of its script's own (kana over kanji every CJK charset shares) wins.
enum CharsetGuess {
    /// The scripts a decoded character belongs to, as the guess weighs them.
    enum Script: Equatable {
        case kana, halfwidthKana, han, hangul, cyrillic, latin, other
    }

    struct Candidate {
        var name: String
        var encoding: String.Encoding
        /// What each script counts for this charset (absent: not its script).
        var weights: [Script: Double]
    }

    static func cfEncoding(_ encoding: CFStringEncodings) -> String.Encoding {
        String.Encoding(rawValue: CFStringConvertEncodingToNSStringEncoding(CFStringEncoding(encoding.rawValue)))
    }

    /// In the order a tie is settled: Japanese phones' charset first. Each charset as a
    /// declared `CHARSET=` names it (`VCardParser.encoding(named:)`).
    static let candidates: [Candidate] = [
        ("Shift_JIS", [.kana: 1.2, .han: 1.0, .halfwidthKana: 0.3]),
        ("EUC-KR", [.hangul: 1.2, .han: 0.5]),
        ("GB18030", [.han: 0.9]),
        ("Big5", [.han: 0.85]),
        ("KOI8-R", [.cyrillic: 1.0]),
        ("windows-1252", [.latin: 0.5]),
    ].map { name, weights in Candidate(name: name, encoding: VCardParser.encoding(named: name)!, weights: weights) }

    static func script(_ scalar: Unicode.Scalar) -> Script {
        switch scalar.value {
        case 0x3040...0x30FF, 0x31F0...0x31FF: return .kana
        case 0xFF66...0xFF9F: return .halfwidthKana
        case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x3005, 0x3007: return .han
        case 0xAC00...0xD7AF, 0x1100...0x11FF, 0x3130...0x318F: return .hangul
        case 0x0400...0x04FF: return .cyrillic
        case 0x00C0...0x024F: return scalar.properties.isAlphabetic ? .latin : .other
        default: return .other
        }
    }

    /// Punctuation every charset writes the same way (a full-width space, a middle dot, «»)
    /// counts for none and against none.
    static func isNeutral(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00A0, 0x00AB, 0x00B7, 0x00BB, 0x2010...0x2027, 0x3000...0x3003, 0x300C...0x300F, 0x30FB, 0xFF08, 0xFF09, 0xFF0C, 0xFF0E: return true
        default: return false
        }
    }

    /// How common an ideograph is in the charset that wrote it, told by its bytes there:
    /// every CJK charset decodes almost any byte pair into some ideograph, but text is
    /// mostly of the first level of common ones (Shift_JIS leads 0x88–0x98, GB2312's
    /// 0xB0–0xD7 with both bytes high, Big5's 0xA4–0xC6), not of the rare rows another
    /// charset's bytes land in (Shift_JIS's 山田 read as GB18030 is 嶳揷).
    static func commonness(_ scalar: Unicode.Scalar, _ candidate: Candidate) -> Double {
        guard let data = String(Character(scalar)).data(using: candidate.encoding), data.count == 2 else { return 0.2 }
        let lead = data[data.startIndex], trail = data[data.startIndex + 1]
        switch candidate.name {
        case "Shift_JIS": return (0x88...0x98).contains(lead) ? 1.0 : 0.6
        case "GB18030": return lead >= 0xB0 && lead <= 0xD7 && trail >= 0xA1 ? 1.0 : lead >= 0xA1 && trail >= 0xA1 ? 0.6 : 0.15
        case "Big5": return (0xA4...0xC6).contains(lead) ? 1.0 : 0.5
        case "EUC-KR": return 1.0
        default: return 1.0
        }
    }

    /// Symbols (♪), Greek and Cyrillic letters, full-width forms: in every CJK charset's
    /// repertoire, no sign of one.
    static func isInCJKCharsets(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0391...0x03C9, 0x0401...0x0451, 0x2100...0x27BF, 0x2E80...0x2FDF, 0x3000...0x303F, 0x3200...0x33FF, 0xFF00...0xFFEF: return true
        default:
            switch scalar.properties.generalCategory {
            case .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol: return true
            default: return false
            }
        }
    }

    /// The decoded text and the charset's name; nil when none reads cleanly.
    static func decode(_ bytes: [UInt8]) -> (String, String)? {
        var best: (text: String, name: String, score: Double)?
        for candidate in candidates {
            guard let text = String(data: Data(bytes), encoding: candidate.encoding), let score = score(text, candidate) else { continue }
            if score > (best?.score ?? 0) { best = (text, candidate.name, score) }
        }
        return best.map { ($0.text, $0.name) }
    }

    /// How well `text` reads as the candidate's scripts; nil when it does not read cleanly.
    static func score(_ text: String, _ candidate: Candidate) -> Double? {
        var score = 0.0
        // Words: runs between blanks and ASCII punctuation (N's `;` separates its parts).
        for word in text.split(whereSeparator: { $0.isASCII && !$0.isLetter && !$0.isNumber }) {
            var asciiLetters = false, ownLetters = false, hangul = false, han = false
            var previousLower = false
            for scalar in word.unicodeScalars {
                if scalar.isASCII {
                    if scalar.properties.isAlphabetic { asciiLetters = true }
                    continue
                }
                if isNeutral(scalar) { continue }
                let kind = script(scalar)
                guard var weight = candidate.weights[kind] else {
                    // The CJK charsets hold Greek, Cyrillic and full-width forms too (♪, Ψ, ￣
                    // on a Japanese phone): neither for them nor against.
                    if candidate.weights[.han] != nil, isInCJKCharsets(scalar) { continue }
                    return nil
                }
                // An alphabet's words are Capitalised or in capitals, not "юНдх" (Chinese
                // bytes read as KOI8-R): a capital after a small letter is a misreading.
                if kind == .cyrillic || kind == .latin {
                    if previousLower && scalar.properties.isUppercase { return nil }
                    previousLower = scalar.properties.isLowercase
                }
                if kind == .han { weight *= commonness(scalar, candidate) }
                if kind == .hangul { hangul = true }
                if kind == .han { han = true }
                score += weight
                if candidate.weights[.latin] == nil { ownLetters = true }
            }
            // A word of ASCII letters and another script's letters is a misreading, and so
            // is a Korean word of Hangul and Hanja together (Chinese bytes read as EUC-KR).
            if asciiLetters && ownLetters { return nil }
            if hangul && han { return nil }
        }
        return score > 0 ? score : nil
    }
}
