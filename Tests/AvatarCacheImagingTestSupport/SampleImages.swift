/// Images the tests make byte by byte, for the image tests and the end-to-end tests that
/// hand them to the binary.
package enum SampleImages {
    /// A baseline TIFF as Address Book wrote them: big-endian ("MM"), RGB, 8 bits a sample,
    /// one uncompressed strip; `width` × `height` of a gradient.
    package static func addressBookTIFF(width: Int = 64, height: Int = 48) -> [UInt8] {
        var bytes: [UInt8] = Array("MM".utf8) + [0x00, 0x2A]
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let entries = 10
        let ifd = 8
        let bitsAt = ifd + 2 + entries * 12 + 4
        let pixelsAt = bitsAt + 6
        bytes += u32(ifd)
        bytes += u16(entries)
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        bytes += entry(256, 3, 1, u16(width))                // ImageWidth
        bytes += entry(257, 3, 1, u16(height))               // ImageLength
        bytes += entry(258, 3, 3, u32(bitsAt))               // BitsPerSample 8, 8, 8
        bytes += entry(259, 3, 1, u16(1))                    // Compression: none
        bytes += entry(262, 3, 1, u16(2))                    // Photometric: RGB
        bytes += entry(273, 4, 1, u32(pixelsAt))             // StripOffsets
        bytes += entry(277, 3, 1, u16(3))                    // SamplesPerPixel
        bytes += entry(278, 3, 1, u16(height))               // RowsPerStrip
        bytes += entry(279, 4, 1, u32(width * height * 3))   // StripByteCounts
        bytes += entry(284, 3, 1, u16(1))                    // PlanarConfiguration: chunky
        bytes += u32(0)
        bytes += u16(8) + u16(8) + u16(8)
        for y in 0..<height {
            for x in 0..<width { bytes += [UInt8(x * 255 / width), UInt8(y * 255 / height), 160] }
        }
        return bytes
    }

    /// The offset of the first start-of-scan marker's data (after its header).
    package static func jpegScanDataOffset(_ bytes: [UInt8]) -> Int {
        var index = 2
        while index + 3 < bytes.count {
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if bytes[index + 1] == 0xDA { return index + 2 + length }
            index += 2 + length
        }
        return bytes.count
    }
}
