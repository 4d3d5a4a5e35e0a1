import ArgumentParser
import CLISupport
import FoundationEssentials
import VaultCore
import VaultFiles

/// What a key restored from paper must be (issue 37): words, a typed key or shares that pass
/// their checksums can still be another valid key (another sheet's words, one wrong word that
/// fits, shares combined under the wrong passphrase). Given `--npub` or `--vault`, the key is
/// confirmed before anything is written and a mismatch is refused (exit 3); without them the
/// restored public key is shown with what to compare it with.
struct ExpectedKeyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The public key printed on the sheet's check values: a restored key other than it is refused (exit 3), nothing written.", valueName: "NPUB"))
    var npub: String?

    @Option(help: ArgumentHelp("A vault the restored key must open (a file, or s3://BUCKET/KEY): another family's refused (exit 3), a damaged one said so (exit 2); nothing written.", valueName: "VAULT"))
    var vault: String?

    var declaredInputs: [FileSet.Input] { vault.map { [FileSet.Input("--vault", $0)] } ?? [] }

    func validate() throws {
        if npub != nil, vault != nil { throw ValidationError("give --npub or --vault, not both") }
    }

    /// Where a restored key came from: what the person compares, why, and what to check
    /// when the key is not the one expected.
    enum Source {
        case sheet, words, shares

        var checkValues: String { self == .shares ? "the share sheets'" : "the sheet's" }

        var trap: String {
            switch self {
            case .sheet: "an old sheet, or another family's, reads as well"
            case .words: "words that pass their checksum can be another sheet's, or hold one wrong word that fits"
            case .shares: "typed shares and files of words carry no check code, and a missing or wrong passphrase restores another key"
            }
        }

        var hint: String {
            switch self {
            case .sheet: "this sheet holds another key: an old sheet, or another family's"
            case .words: "check each word (or character) against the sheet: a wrong word that still fits the checksum, or another sheet's words, restore another key"
            case .shares: "check the passphrase, and that every share is of this family's set"
            }
        }
    }

    /// Confirms `key` before it is written, and says so on standard error; without an
    /// expectation, shows the public key with what to compare it with, unless `checked` (the
    /// shares' check code already named its household).
    func confirm(_ key: SecretKey, from source: Source, checked: DisplayText? = nil) throws {
        let restored = key.publicKey
        if let npub {
            let expected = try PublicKey(npub: npub.trimmingWhiteSpace())
            guard expected == restored else {
                throw VaultError.restoredAnotherKey(restored: restored.npub, expected: "the public key given", hint: source.hint)
            }
            diagnostics.note("public key: \(restored.npub), the one given")
            return
        }
        if let vault {
            do {
                _ = try VaultOfKey.open(InputFiles.read(vault, what: "vault"), key: key, name: InputFiles.quotedName(vault), what: "the restored key (public key \(restored.npub))",
                                        hint: "the sheet is right: keep it, and write the key by comparing the public key with the sheet's (--npub NPUB); restore the vault from a backup or a device")
            } catch let error as VaultError where error.code.category == .authentication {
                throw VaultError.restoredAnotherKey(restored: restored.npub, expected: "the key of the vault \(InputFiles.quotedName(vault)) (\(error.reason))",
                                                    hint: source.hint)
            }
            diagnostics.note("public key: \(restored.npub); it opens the vault \(InputFiles.quotedName(vault))")
            return
        }
        diagnostics.note("public key: \(restored.npub)")
        if let checked {
            diagnostics.note(checked)
        } else {
            diagnostics.note("compare it with the public key printed on \(source.checkValues) check values before using the key: \(source.trap); --npub or --vault checks it before anything is written")
        }
    }
}

/// A vault opened with a key read from paper. The header names the household of the key that
/// sealed the vault (a hash of its public key): when it names this key's, the key is the
/// family's, and a vault that does not open, however it fails, is damaged. Said so, not blamed
/// on the paper, which a family might then throw away (a hostile trial). One rule for `words`,
/// `scan`, `combine` and `verify`.
enum VaultOfKey {
    /// `what` names the key and `hint` the next step in the refusal of a damaged vault.
    static func open(_ bytes: [UInt8], key: SecretKey, name: String, what: String, hint: String) throws -> OpenedVault {
        do {
            return try Vault.open(bytes, with: .parentKey(key))
        } catch let error as VaultError where (try? VaultHeader(parsing: bytes))?.householdID == Household(parentPublicKey: key.publicKey).id {
            throw VaultError.damagedVaultOfThisKey(what, vault: name, error.reason, hint: hint)
        }
    }
}

extension VaultError {
    /// The key (`what`) is the one the vault's header names, and the vault does not open: the
    /// vault is damaged, not the paper.
    static func damagedVaultOfThisKey(_ what: String, vault: String, _ reason: String, hint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.corruptVault, "\(what) is the one the vault \(vault) was sealed with (its header names its household): the vault is damaged, not the paper (\(reason)); nothing was written",
                   hint: hint, file: file, line: line)
    }

    /// A restored key that is not the one the person said it must be.
    static func restoredAnotherKey(restored: String, expected: String, hint: String, file: String = #fileID, line: UInt = #line) -> VaultError {
        VaultError(.keyMismatch, "the restored key (public key \(restored)) is not \(expected); nothing was written", hint: hint, file: file, line: line)
    }
}
