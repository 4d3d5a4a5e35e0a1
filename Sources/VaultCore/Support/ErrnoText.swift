import Glibc

/// The words every message uses for a system error number: the C library's text, lower case
/// ("permission denied"), or "error N" for a number it does not know. One place, so that every
/// factory that names an errno says it the same way.
public enum ErrnoText {
    public static func of(_ code: Int32) -> String {
        (strerror(code).flatMap { String(validatingCString: $0) } ?? "error \(code)").lowercased()
    }
}
