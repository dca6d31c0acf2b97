import AvatarCacheModel
/// Byte counts as people write them: `100MB`, `512KB`, `2GB`, `1.5MB`, `20000000`.
/// KB/MB/GB are powers of 1,000 (as disk sizes are sold and `du --si` prints);
/// KiB/MiB/GiB are powers of 1,024. Case-insensitive; a bare number is bytes.
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingSpaces.lowercased()
        let units: [(String, Double)] = [
            ("kib", 1024), ("mib", 1024 * 1024), ("gib", 1024 * 1024 * 1024),
            ("kb", 1e3), ("mb", 1e6), ("gb", 1e9), ("k", 1e3), ("m", 1e6), ("g", 1e9), ("b", 1),
        ]
        var number = Substring(trimmed)
        var multiplier = 1.0
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            number = trimmed.dropLast(suffix.count)
            multiplier = factor
            break
        }
        guard let value = Double(number.trimmingSpaces), value >= 0, value.isFinite else { return nil }
        let bytes = (value * multiplier).rounded()
        guard bytes < 9e18 else { return nil }
        return Int64(bytes)
    }

    /// "1.2 MB"-style text, powers of 1,000 like `parse`.
    public static func format(_ bytes: Int64) -> String {
        let value = Double(bytes)
        switch abs(value) {
        case ..<1_000: return "\(bytes) B"
        case ..<1_000_000: return formatted("%.1f KB", value / 1e3)
        case ..<1_000_000_000: return formatted("%.1f MB", value / 1e6)
        default: return formatted("%.2f GB", value / 1e9)
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
