/// Base64 (RFC 4648's standard alphabet, padded) decoded straight from the text's bytes,
/// skipping the blanks and line ends that exports fold it with: an inline photo of 20 MB
/// is decoded without a copy of its text, and without reading it as `Character`s
/// (docs/performance-notes.md, "Base64 from the bytes"). It takes whole groups of four with `=` only as the last one
/// or two (RFC 4648), and gives `Data(base64Encoded:)`'s bytes for them; it refuses a
/// stray `=` after a whole group, which Foundation lets by.
enum Base64 {
    enum Decoded: Equatable {
        case bytes([UInt8])
        /// More than `maxBytes` bytes, told before any is decoded.
        case tooLarge
        case invalid
    }

    /// Space, tab, line feed, vertical tab, form feed, carriage return.
    @inline(__always) static func isBlank(_ byte: UInt8) -> Bool {
        byte == 32 || (byte >= 9 && byte <= 13)
    }

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, letter) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(letter)] = UInt8(value)
        }
        return table
    }()

    static func decode<Text: Collection<UInt8>>(_ text: Text, maxBytes: Int) -> Decoded {
        let values = Self.values
        var symbols = 0, padding = 0
        for byte in text where !isBlank(byte) {
            if byte == UInt8(ascii: "=") {
                padding += 1
            } else if padding > 0 || values[Int(byte)] == 0xFF {
                return .invalid
            }
            symbols += 1
        }
        guard symbols % 4 == 0, padding <= 2 else { return .invalid }
        let count = symbols / 4 * 3 - padding
        guard count <= maxBytes else { return .tooLarge }
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        var group: UInt32 = 0, inGroup = 0
        for byte in text where !isBlank(byte) && byte != UInt8(ascii: "=") {
            group = group << 6 | UInt32(values[Int(byte)])
            inGroup += 1
            if inGroup == 4 {
                bytes.append(UInt8(truncatingIfNeeded: group >> 16))
                bytes.append(UInt8(truncatingIfNeeded: group >> 8))
                bytes.append(UInt8(truncatingIfNeeded: group))
                group = 0
                inGroup = 0
            }
        }
        // The last group's two or three symbols: `=` stood for the rest.
        if inGroup == 3 {
            bytes.append(UInt8(truncatingIfNeeded: group >> 10))
            bytes.append(UInt8(truncatingIfNeeded: group >> 2))
        } else if inGroup == 2 {
            bytes.append(UInt8(truncatingIfNeeded: group >> 4))
        }
        return .bytes(bytes)
    }
}
