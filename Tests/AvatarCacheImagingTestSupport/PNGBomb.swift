/// Builds a PNG whose header declares a huge image: signature, IHDR, nothing else.
package enum PNGBomb {
    package static func make(width: UInt32, height: UInt32) -> [UInt8] {
        var ihdr: [UInt8] = Array("IHDR".utf8)
        ihdr += bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += bigEndian(13) + ihdr + bigEndian(crc32(ihdr))
        var idat: [UInt8] = Array("IDAT".utf8) + [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
        png += bigEndian(UInt32(idat.count - 4)) + idat + bigEndian(crc32(idat))
        idat = Array("IEND".utf8)
        png += bigEndian(0) + idat + bigEndian(crc32(idat))
        return png
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
