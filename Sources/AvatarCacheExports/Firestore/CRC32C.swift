/// CRC-32C (Castagnoli), as LevelDB's log format checks each record with, and its mask.
/// Slicing by eight: a Firestore export of a million documents is about 200 MB, so the
/// checksum is on the read stage's path.
enum CRC32C {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][n] = crc
        }
        for n in 0..<256 {
            for k in 1..<8 {
                let previous = tables[k - 1][n]
                tables[k][n] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()
    private static let flat: [UInt32] = tables.flatMap { $0 }

    /// The CRC of `bytes`, continuing from `crc` (0 to start).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        flat.withUnsafeBufferPointer { table in
            var crc = ~crc
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                crc = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(bytes[index + 4])] ^ table[2 * 256 + Int(bytes[index + 5])]
                    ^ table[1 * 256 + Int(bytes[index + 6])] ^ table[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return ~crc
        }
    }

    /// LevelDB stores `mask(crc)`: a CRC of data that holds CRCs is otherwise weak.
    static func masked(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}
