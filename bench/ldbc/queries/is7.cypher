// IS7. Replies of a message: the comments replying directly to it, their authors, and whether each reply's author
// knows the message's author (false when they are the same person).
MATCH (message:Message {id: $messageId})-[:HAS_CREATOR]->(messageAuthor:Person)
MATCH (message)<-[:REPLY_OF]-(comment:Comment)-[:HAS_CREATOR]->(replyAuthor:Person)
RETURN
  comment.id AS commentId,
  comment.content AS commentContent,
  comment.creationDate AS commentCreationDate,
  replyAuthor.id AS replyAuthorId,
  replyAuthor.firstName AS replyAuthorFirstName,
  replyAuthor.lastName AS replyAuthorLastName,
  CASE
    WHEN replyAuthor = messageAuthor THEN false
    ELSE EXISTS { (messageAuthor)-[:KNOWS]-(replyAuthor) }
  END AS replyAuthorKnowsOriginalMessageAuthor
ORDER BY commentCreationDate DESC, replyAuthorId ASC
