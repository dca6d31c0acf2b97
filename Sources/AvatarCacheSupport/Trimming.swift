#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension String {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`: the same characters (Unicode's
    /// White_Space, and U+200B, which Foundation counts among its blanks), walking in from
    /// the two ends only, where Foundation's reads the whole string as UTF-16
    /// (docs/performance-notes.md, "Trimming from the ends").
    package var trimmedWhitespace: String {
        guard let first = utf8.first, let last = utf8.last else { return self }
        func plain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
        if plain(first) && plain(last) { return self }
        func blank(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar.value == 0x200B }
        let scalars = unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, blank(scalars[start]) { scalars.formIndex(after: &start) }
        while end > start, blank(scalars[scalars.index(before: end)]) { scalars.formIndex(before: &end) }
        if start == scalars.startIndex, end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }
}
