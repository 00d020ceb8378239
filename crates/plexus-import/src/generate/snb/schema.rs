//! The files of the LDBC SNB Interactive "CsvComposite" layout and their header rows, exactly as in the LDBC tiny
//! data set: `|`-separated, one header row, dates as epoch milliseconds, `;`-joined multi-valued attributes.

/// One output file: its directory (`static` or `dynamic`), file name and header row (without the newline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSpec {
    pub dir: &'static str,
    pub name: &'static str,
    pub header: &'static str,
}

/// Index of each file in [`FILES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum F {
    Organisation,
    OrganisationIsLocatedInPlace,
    Place,
    PlaceIsPartOfPlace,
    Tag,
    TagHasTypeTagClass,
    TagClass,
    TagClassIsSubclassOfTagClass,
    Comment,
    CommentHasCreatorPerson,
    CommentHasTagTag,
    CommentIsLocatedInPlace,
    CommentReplyOfComment,
    CommentReplyOfPost,
    Forum,
    ForumContainerOfPost,
    ForumHasMemberPerson,
    ForumHasModeratorPerson,
    ForumHasTagTag,
    Person,
    PersonHasInterestTag,
    PersonIsLocatedInPlace,
    PersonKnowsPerson,
    PersonLikesComment,
    PersonLikesPost,
    PersonStudyAtOrganisation,
    PersonWorkAtOrganisation,
    Post,
    PostHasCreatorPerson,
    PostHasTagTag,
    PostIsLocatedInPlace,
}

const fn spec(dir: &'static str, name: &'static str, header: &'static str) -> FileSpec {
    FileSpec { dir, name, header }
}

const S: &str = "static";
const D: &str = "dynamic";

/// Every file written, in the order of [`F`].
pub const FILES: [FileSpec; 31] = [
    spec(S, "organisation_0_0.csv", "id|type|name|url"),
    spec(S, "organisation_isLocatedIn_place_0_0.csv", "Organisation.id|Place.id"),
    spec(S, "place_0_0.csv", "id|name|url|type"),
    spec(S, "place_isPartOf_place_0_0.csv", "Place.id|Place.id"),
    spec(S, "tag_0_0.csv", "id|name|url"),
    spec(S, "tag_hasType_tagclass_0_0.csv", "Tag.id|TagClass.id"),
    spec(S, "tagclass_0_0.csv", "id|name|url"),
    spec(S, "tagclass_isSubclassOf_tagclass_0_0.csv", "TagClass.id|TagClass.id"),
    spec(D, "comment_0_0.csv", "id|creationDate|locationIP|browserUsed|content|length"),
    spec(D, "comment_hasCreator_person_0_0.csv", "Comment.id|Person.id"),
    spec(D, "comment_hasTag_tag_0_0.csv", "Comment.id|Tag.id"),
    spec(D, "comment_isLocatedIn_place_0_0.csv", "Comment.id|Place.id"),
    spec(D, "comment_replyOf_comment_0_0.csv", "Comment.id|Comment.id"),
    spec(D, "comment_replyOf_post_0_0.csv", "Comment.id|Post.id"),
    spec(D, "forum_0_0.csv", "id|title|creationDate"),
    spec(D, "forum_containerOf_post_0_0.csv", "Forum.id|Post.id"),
    spec(D, "forum_hasMember_person_0_0.csv", "Forum.id|Person.id|joinDate"),
    spec(D, "forum_hasModerator_person_0_0.csv", "Forum.id|Person.id"),
    spec(D, "forum_hasTag_tag_0_0.csv", "Forum.id|Tag.id"),
    spec(
        D,
        "person_0_0.csv",
        "id|firstName|lastName|gender|birthday|creationDate|locationIP|browserUsed|language|email",
    ),
    spec(D, "person_hasInterest_tag_0_0.csv", "Person.id|Tag.id"),
    spec(D, "person_isLocatedIn_place_0_0.csv", "Person.id|Place.id"),
    spec(D, "person_knows_person_0_0.csv", "Person.id|Person.id|creationDate"),
    spec(D, "person_likes_comment_0_0.csv", "Person.id|Comment.id|creationDate"),
    spec(D, "person_likes_post_0_0.csv", "Person.id|Post.id|creationDate"),
    spec(D, "person_studyAt_organisation_0_0.csv", "Person.id|Organisation.id|classYear"),
    spec(D, "person_workAt_organisation_0_0.csv", "Person.id|Organisation.id|workFrom"),
    spec(D, "post_0_0.csv", "id|imageFile|creationDate|locationIP|browserUsed|language|content|length"),
    spec(D, "post_hasCreator_person_0_0.csv", "Post.id|Person.id"),
    spec(D, "post_hasTag_tag_0_0.csv", "Post.id|Tag.id"),
    spec(D, "post_isLocatedIn_place_0_0.csv", "Post.id|Place.id"),
];
