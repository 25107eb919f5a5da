//! The page's copy of the settings definition, www/state/engine-settings.js,
//! is the engine's own (`nexttoken settings --js`), byte for byte: the page
//! reads every default, range and choice from it and holds none of its own.

use nexttoken::schema::SettingsTable;

#[test]
fn the_page_module_is_the_engines_settings_definition() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../www/state/engine-settings.js");
    let on_disk = std::fs::read_to_string(path).expect("www/state/engine-settings.js exists");
    let want = SettingsTable::new().to_page_module();
    assert!(
        on_disk == want,
        "www/state/engine-settings.js is stale: regenerate it with\n  \
         cargo run -p nexttoken --bin nexttoken -- settings --js > www/state/engine-settings.js"
    );
}
