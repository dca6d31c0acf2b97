import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Avatar colours: the source's colour when it gives a valid one, otherwise one of the
/// apps' eight by a stable hash of the user id (MD5, as Jami does: the same in every
/// process and on every machine, unlike Swift's `hashValue`). The text colour is white
/// or black, whichever reaches the higher contrast (WCAG AA needs 4.5:1).
public enum AvatarColor {
    /// The apps' palette, in its order.
    public static let palette = ["#007AFF", "#34C759", "#FF9500", "#AF52DE", "#FF2D55", "#FF3B30", "#5856D6", "#30B0C7"]
    public static let white = "#FFFFFF"
    public static let black = "#000000"

    /// `#RRGGBB` uppercased, or nil when `text` is not exactly that (with or without `#`).
    public static func normalized(_ text: String?) -> String? {
        guard var hex = text?.trimmingSpaces else { return nil }
        if hex.hasPrefix("#") { hex.removeFirst() }
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit) else { return nil }
        return "#" + hex.uppercased()
    }

    /// The palette colour for a user id.
    public static func paletteColor(forUserID id: String) -> String {
        let digest = Digests.md5(id.utf8)
        let index = (UInt32(digest[0]) << 24 | UInt32(digest[1]) << 16 | UInt32(digest[2]) << 8 | UInt32(digest[3])) % UInt32(palette.count)
        return palette[Int(index)]
    }

    /// WCAG 2 relative luminance of `#RRGGBB`.
    public static func luminance(_ hex: String) -> Double {
        let value = UInt32(hex.dropFirst(), radix: 16) ?? 0
        func channel(_ shift: UInt32) -> Double {
            let c = Double((value >> shift) & 0xFF) / 255
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * channel(16) + 0.7152 * channel(8) + 0.0722 * channel(0)
    }

    public static func contrast(_ a: String, _ b: String) -> Double {
        let (la, lb) = (luminance(a), luminance(b))
        return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
    }

    /// White when it reaches 4.5:1 on `background`, else black. One of the two always
    /// does: their contrasts cross at luminance 0.179, where both are 4.58:1.
    public static func textColor(on background: String) -> String {
        contrast(white, background) >= 4.5 ? white : black
    }
}

