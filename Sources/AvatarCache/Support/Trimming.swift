import Foundation

extension String {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, without Foundation's work when
    /// neither end is white space (the common case, asked once per export record).
    var trimmedWhitespace: String {
        guard let first = utf8.first, let last = utf8.last else { return self }
        func plain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
        if plain(first) && plain(last) { return self }
        return trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
