/// The source formats we decode, recognised by their leading bytes, so that nothing
/// else ever reaches a libvips loader.
public enum ImageFormat: String, Sendable, Codable {
    case jpeg, png, webp, gif, heif
    /// Old Mac OS X Address Book exports carry their photos as TIFF: decoded only when
    /// an export carries it inline, never from a download (`AvatarRenderer.render`).
    case tiff
    /// Windows address books carry their photos as BMP: decoded only inline, like TIFF,
    /// by our own decoder (`BMPDecoder`), never by ImageMagick.
    case bmp

    /// Sniffs the format from the first bytes. Returns nil for anything we do not decode
    /// and describes it in `unsupportedDescription`.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        func starts(with prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            for (index, byte) in prefix.enumerated() where bytes[offset + index] != byte { return false }
            return true
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        // "BM" and a header size Windows or OS/2 writes.
        if starts(with: [0x42, 0x4D]), bytes.count >= 18,
           [12, 40, 52, 56, 64, 108, 124].contains(Int(bytes[14]) | Int(bytes[15]) << 8 | Int(bytes[16]) << 16 | Int(bytes[17]) << 24) {
            return .bmp
        }
        if starts(with: Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            let brand = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[8..<12]), as: UTF8.self)
            let heifBrands: Set = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "avif", "avis"]
            if heifBrands.contains(brand) { return .heif }
        }
        return nil
    }

    /// A short human name for bytes that `sniff` refused, for the error message.
    public static func unsupportedDescription(_ bytes: UnsafeRawBufferPointer) -> String {
        func has(_ text: String, at offset: Int = 0) -> Bool {
            let prefix = Array(text.utf8)
            guard bytes.count >= offset + prefix.count else { return false }
            return prefix.enumerated().allSatisfy { bytes[offset + $0.offset] == $0.element }
        }
        if bytes.isEmpty { return "empty body" }
        if has("%PDF") { return "PDF document" }
        if has("8BPS") { return "Photoshop document" }
        if has("BM") { return "BMP image" }
        if has("II*\u{0}") || has("MM\u{0}*") { return "TIFF image" }
        if has("SIMPLE") { return "FITS image" }
        let head = String(decoding: UnsafeRawBufferPointer(rebasing: bytes.prefix(256)), as: UTF8.self).lowercased()
        if head.contains("<svg") || (head.hasPrefix("<?xml") && head.contains("svg")) { return "SVG image" }
        if head.contains("<html") || head.contains("<!doctype") { return "HTML page" }
        if has("ftyp", at: 4) { return "ISO media file that is not HEIC/AVIF" }
        return "not a JPEG, PNG, WebP, GIF or HEIC/AVIF image"
    }
}
