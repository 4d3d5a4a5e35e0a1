/// What is wrong with a share or a set of shares, as a value (issue 14). Shares are numbered
/// from 1 in the order they were given; a caller that knows their file names says which file is
/// meant. Nothing here reveals a share's value or the secret: only counts, positions, the public
/// set number and indexes.
public enum ShareProblem: Error, Hashable, Sendable, VaultErrorConvertible {
    /// Not 20 to 33 words, or not a length SLIP-0039 allows.
    case wrongWordCount(share: Int, count: Int)
    /// A word that is not in the SLIP-0039 list (at `position`, from 1).
    case unknownWord(share: Int, position: Int)
    /// The RS1024 checksum fails: a word is mistyped or two are swapped.
    case checksumFailed(share: Int)
    /// The checksum fails, and points to one word: the one at this printed number (from 1).
    case wrongWord(share: Int, position: Int)
    /// The share's padding bits are not zero, or there are too many of them.
    case badPadding(share: Int)
    /// The share says more groups are needed than there are.
    case groupThresholdAboveCount(share: Int)
    /// This share belongs to another set (identifier, iteration exponent, groups or length differ).
    case differentSets(share: Int, firstSet: Int, otherSet: Int)
    /// The same share given twice.
    case duplicateShare(share: Int, sameAs: Int)
    /// Two different shares claim the same place in a group.
    case duplicateMemberIndex(share: Int, sameAs: Int)
    /// Shares of one group disagree on how many of them the group needs.
    case memberThresholdsDiffer(share: Int, group: Int)
    /// A one-group set with too few shares.
    case notEnoughShares(needed: Int, given: Int, set: Int)
    /// A two-level set with too few complete groups; `incomplete` lists each group (from 1) that
    /// has shares but fewer than it needs, with how many it needs and has.
    case notEnoughGroups(needed: Int, complete: Int, set: Int, incomplete: [GroupCount])
    /// The shares combine, but not to the digest they carry: they were not made together.
    case digestMismatch(set: Int)
    /// A share beyond the threshold does not lie on the others' polynomial.
    case shareDoesNotFit(share: Int)
    /// A share whose group has too few shares to be checked, given with enough other groups.
    case unusedShare(share: Int)
    /// The sheet's title or set line copied above the words names another share, group or set
    /// than the words are (`named` and `words` say which: "share 2", "set 7945").
    case headingNamesAnotherShare(share: Int, named: String, words: String)
    /// A picture holds the check code of one set beside the share code of another: parts of
    /// two sheets put together.
    case pictureMixesSheets(share: Int, checkSet: Int, codeSet: Int)
    /// A picture holds more than one share code, or check codes of more than one set.
    case severalSheetsInOnePicture(share: Int)
    /// The passphrase has characters outside printable ASCII, which SLIP-0039 requires.
    case passphraseNotPrintableASCII
    /// A split that SLIP-0039 cannot express.
    case invalidConfiguration(String)
    /// The secret is not 16 to 64 bytes in steps of 2.
    case invalidSecretLength(Int)

    /// A group's threshold and the shares given for it.
    public struct GroupCount: Hashable, Sendable {
        public let group: Int
        public let needed: Int
        public let given: Int
    }

    /// The shares (numbered from 1, in the order given) this problem is about.
    public var shares: [Int] {
        switch self {
        case let .wrongWordCount(share, _), let .unknownWord(share, _), let .checksumFailed(share), let .wrongWord(share, _), let .badPadding(share),
             let .groupThresholdAboveCount(share), let .differentSets(share, _, _), let .memberThresholdsDiffer(share, _),
             let .shareDoesNotFit(share), let .headingNamesAnotherShare(share, _, _), let .pictureMixesSheets(share, _, _),
             let .severalSheetsInOnePicture(share):
            [share]
        case let .duplicateShare(share, other), let .duplicateMemberIndex(share, other):
            [other, share]
        default:
            []
        }
    }

    public var vaultError: VaultError {
        switch self {
        case .passphraseNotPrintableASCII, .invalidConfiguration, .invalidSecretLength:
            VaultError.invalidShareConfiguration(self)
        default:
            VaultError.invalidShares(self)
        }
    }

    /// Why, for a person; the share is named by its number.
    public var reason: String {
        switch self {
        case let .wrongWordCount(share, count):
            "share \(share) has \(count) words; a share has 20 to 59 words (a family key's shares have 33)"
        case let .unknownWord(share, position):
            "word \(position) of share \(share) is not a SLIP-39 word"
        case let .checksumFailed(share):
            "share \(share) fails its checksum: a word is mistyped or two words are swapped"
        case let .wrongWord(share, position):
            "share \(share) fails its checksum, which points to word \(position) (its number on the sheet): check that word"
        case let .badPadding(share):
            "share \(share) is not a valid share (its padding bits are wrong)"
        case let .groupThresholdAboveCount(share):
            "share \(share) is not a valid share (it needs more groups than its set has)"
        case let .differentSets(share, first, other) where first == other:
            // The same set's number with other settings (SLIP-0039's vectors 7–9, 26–28): "from
            // set 20976, the others from set 20976" told a parent nothing (a trial).
            "share \(share) names set \(first) as the others do, but not its settings (its group count, group threshold, iteration count, extendable flag or secret's length): it was changed or made for another split, and never combines with them"
        case let .differentSets(share, first, other):
            "share \(share) is from set \(other), the others from set \(first): shares of different sets never combine"
        case let .duplicateShare(share, sameAs):
            "share \(share) is the same share as share \(sameAs): each share counts once"
        case let .duplicateMemberIndex(share, sameAs):
            "shares \(sameAs) and \(share) claim the same place in their group: one of them is from another set"
        case let .memberThresholdsDiffer(share, group):
            "share \(share) disagrees with the other shares of group \(group) on how many the group needs"
        case let .notEnoughShares(needed, given, set):
            "\(needed) of the set's shares \(needed == 1 ? "is" : "are") needed, \(given) given (set \(set))"
        case let .notEnoughGroups(needed, complete, set, incomplete):
            "\(needed) complete \(needed == 1 ? "group is" : "groups are") needed, \(complete) given (set \(set))"
                + incomplete.map { "; group \($0.group) has \($0.given) of the \($0.needed) shares it needs" }.joined()
        case let .digestMismatch(set):
            "the shares do not combine to their set's check value (set \(set)): one of them was changed or made for another split"
        case let .shareDoesNotFit(share):
            "share \(share) does not fit with the others: it was changed or made for another split"
        case let .unusedShare(share):
            "share \(share) is not needed, and its group has too few shares to check it: leave it out, or add the rest of its group"
        case let .headingNamesAnotherShare(share, named, words):
            "the heading typed with share \(share) says \(named), but the words are \(words): they were copied from another sheet"
        case let .pictureMixesSheets(share, checkSet, codeSet):
            "the picture of share \(share) holds the check code of set \(checkSet) beside the share code of set \(codeSet): parts of two sheets"
        case let .severalSheetsInOnePicture(share):
            "the picture of share \(share) holds more than one sheet's codes: give each sheet a picture of its own"
        case .passphraseNotPrintableASCII:
            "a share passphrase may contain only printable ASCII characters (SLIP-0039)"
        case let .invalidConfiguration(why):
            why
        case let .invalidSecretLength(count):
            "a shared secret is 16 to 64 bytes in steps of 2, not \(count)"
        }
    }
}

/// An error that VaultCore reports as a value of its own (a typed refusal) and that the tools
/// show as a ``VaultError``: its code gives the exit status, its reason the message.
public protocol VaultErrorConvertible: Error {
    var vaultError: VaultError { get }
}

extension VaultError.Code {
    /// Shares that cannot be read or do not combine (SLIP-0039).
    public static let invalidShares = VaultError.Code(name: "invalidShares", category: .invalidInput)
    /// A split or passphrase that SLIP-0039 cannot express.
    public static let invalidShareConfiguration = VaultError.Code(name: "invalidShareConfiguration", category: .invalidInput)
}

extension VaultError {
    /// Shares that cannot be read or do not combine, worded by their problem.
    static func invalidShares(_ problem: ShareProblem, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidShares, problem.reason, file: file, line: line)
    }

    /// A split or passphrase SLIP-0039 cannot express, worded by its problem.
    static func invalidShareConfiguration(_ problem: ShareProblem, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.invalidShareConfiguration, problem.reason, file: file, line: line)
    }
}
