/// Where a JPEG's data ends: whether its end-of-image marker is there. A file cut short
/// (a truncated download, a phone's interrupted read-out) has none; a file with a stray
/// byte or a damaged data segment inside, which every browser shows, has it. Only the
/// second may be decoded past libjpeg's warnings (`cvipsshim_jpeg_decode_centre_tolerant`).
enum JPEGStructure {
    /// Walks the segments before the first start of scan by their lengths (an EXIF
    /// thumbnail, with its own end marker, is inside one and skipped), then looks for
    /// `FF D9` after it: entropy-coded data never holds one (an FF there is followed by
    /// 00 or a restart marker), and a damaged scan may hold markers of any kind, so they
    /// are not walked.
    static func hasEndOfImage(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var index = 2
        while index + 3 < count {
            guard bytes[index] == 0xFF else { index += 1; continue }   // a stray byte between segments
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }
            if marker == 0xD9 { return true }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return false }
            index += 2 + length
            if marker == 0xDA { break }
        }
        while index + 1 < count {
            if bytes[index] == 0xFF && bytes[index + 1] == 0xD9 { return true }
            index += 1
        }
        return false
    }
}
