/// Where a JPEG's data ends: whether its end-of-image marker is there. A file cut short
/// (a truncated download, a phone's interrupted read-out) has none; a file with a stray
/// byte or a short data segment inside, which every browser shows, has it. Only the
/// second may be decoded past libjpeg's warnings (`cvipsshim_jpeg_decode_centre_tolerant`).
enum JPEGStructure {
    /// Walks the markers from the start: segments by their lengths (an EXIF thumbnail,
    /// with its own end marker, is inside one and skipped), entropy-coded data byte by
    /// byte after each start of scan, up to the end-of-image marker `FF D9`.
    static func hasEndOfImage(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var index = 2
        var inScan = false
        while index + 1 < count {
            if inScan {
                // Entropy-coded data: FF 00 is a stuffed FF, FF D0-D7 a restart marker,
                // FF FF fill; any other FF xx is a marker.
                guard bytes[index] == 0xFF else { index += 1; continue }
                let next = bytes[index + 1]
                if next == 0x00 || (0xD0...0xD7).contains(next) { index += 2; continue }
                if next == 0xFF { index += 1; continue }
                inScan = false
            }
            guard bytes[index] == 0xFF else {
                // Between segments, where a marker belongs: a stray byte (libjpeg skips
                // such bytes with a warning, "extraneous bytes before marker").
                index += 1
                continue
            }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }
            if marker == 0xD9 { return true }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            guard index + 3 < count else { return false }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return false }
            index += 2 + length
            if marker == 0xDA { inScan = true }
        }
        return false
    }
}
